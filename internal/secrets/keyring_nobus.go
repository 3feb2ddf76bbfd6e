//go:build darwin || windows

package secrets

// sessionBus: the Keychain and the Credential Manager need no bus.
func sessionBus() error { return nil }
