package secrets

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/zalando/go-keyring"
)

// Keyring is the OS keyring as the secrets package uses it: the Secret
// Service (D-Bus) on Linux and BSD, the Keychain on macOS, the Credential
// Manager on Windows, through github.com/zalando/go-keyring. Tests may
// replace [OS] with a fake only where no real keyring can run.
type Keyring interface {
	Get(service, account string) (string, error)
	Set(service, account, value string) error
	Delete(service, account string) error
}

// ErrNotFound is a keyring item that does not exist.
var ErrNotFound = keyring.ErrNotFound

type osKeyring struct{}

func (osKeyring) Get(s, a string) (string, error) {
	if err := sessionBus(); err != nil {
		return "", err
	}
	return keyring.Get(s, a)
}

func (osKeyring) Set(s, a, v string) error {
	if err := sessionBus(); err != nil {
		return err
	}
	return keyring.Set(s, a, v)
}

func (osKeyring) Delete(s, a string) error {
	if err := sessionBus(); err != nil {
		return err
	}
	return keyring.Delete(s, a)
}

var (
	osMu sync.RWMutex
	os_  Keyring = osKeyring{}
)

// OS returns the keyring in use.
func OS() Keyring {
	osMu.RLock()
	defer osMu.RUnlock()
	return os_
}

// SetOS replaces the keyring (tests) and returns the previous one.
func SetOS(k Keyring) Keyring {
	osMu.Lock()
	defer osMu.Unlock()
	prev := os_
	os_ = k
	return prev
}

// KeyringName names the backend of this platform, for messages.
func KeyringName() string {
	switch runtime.GOOS {
	case "darwin":
		return "the macOS Keychain"
	case "windows":
		return "the Windows Credential Manager"
	default:
		return "the Secret Service (D-Bus: gnome-keyring, KeePassXC, KWallet)"
	}
}

// KeyringAvailable says whether the OS keyring answers: nil, or why not
// in words. It reads one item that need not exist.
func KeyringAvailable() error {
	_, err := OS().Get("agent-tools", "probe")
	if err == nil || errors.Is(err, ErrNotFound) {
		return nil
	}
	return fmt.Errorf("%s is not available: %v", KeyringName(), err)
}

func resolveKeyring(_ context.Context, _ *Resolver, key string) (string, error) {
	service, account, err := SplitKeyring(key)
	if err != nil {
		return "", err
	}
	v, err := OS().Get(service, account)
	switch {
	case errors.Is(err, ErrNotFound):
		return "", fmt.Errorf("keyring store: no item for service %q account %q in %s (store one with: agent-tools secrets set %s)", service, account, KeyringName(), key)
	case err != nil:
		return "", fmt.Errorf("keyring store: reading service %q account %q: %s is not available: %v", service, account, KeyringName(), err)
	}
	return v, nil
}

// KeyringService is the keyring service of agent-tools' own items (the
// upstream token store's key, the age identity).
const KeyringService = "agent-tools"
