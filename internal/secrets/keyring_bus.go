//go:build !darwin && !windows

package secrets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// sessionBus says whether a D-Bus session bus can be reached without
// starting one: the D-Bus library would otherwise launch a daemon of its
// own (dbus-launch) that outlives this process.
func sessionBus() error {
	a := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if strings.HasPrefix(a, "disabled:") { // tests: never the desktop's keyring
		return errors.New("the session bus is disabled (DBUS_SESSION_BUS_ADDRESS=disabled:)")
	}
	if a != "" && !strings.HasPrefix(a, "autolaunch:") {
		return nil
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "bus")); err == nil {
			return nil
		}
	}
	return errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set): the Secret Service runs in a desktop session, or under dbus-run-session with gnome-keyring-daemon --unlock")
}
