// Package secretstest starts the real secret stores tests use: the Secret
// Service (Debian's gnome-keyring on a private D-Bus session bus) and pass
// with a throwaway GnuPG home. A test whose store is missing skips with the
// reason.
package secretstest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// waitLoginCollection waits, on D-Bus signals, until the Secret Service
// has its default collection, unlocked: gnome-keyring --unlock creates the
// login keyring after it starts serving, then unlocks it.
func waitLoginCollection() error {
	conn, err := dbus.SessionBus()
	if err != nil {
		return err
	}
	ch := make(chan *dbus.Signal, 16)
	conn.Signal(ch)
	defer conn.RemoveSignal(ch)
	for _, m := range [][]dbus.MatchOption{
		{dbus.WithMatchInterface("org.freedesktop.Secret.Service")},
		{dbus.WithMatchInterface("org.freedesktop.DBus.Properties"), dbus.WithMatchMember("PropertiesChanged")},
		{dbus.WithMatchInterface("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged")},
	} {
		if err := conn.AddMatchSignal(m...); err != nil {
			return err
		}
	}
	ready := func() bool {
		var path dbus.ObjectPath
		err := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
			Call("org.freedesktop.Secret.Service.ReadAlias", dbus.FlagNoAutoStart, "default").Store(&path)
		if err != nil || path == "/" {
			return false
		}
		locked, err := conn.Object("org.freedesktop.secrets", path).GetProperty("org.freedesktop.Secret.Collection.Locked")
		return err == nil && locked.Value() == false
	}
	deadline := time.After(20 * time.Second)
	for !ready() {
		select {
		case <-ch: // a collection or the service's owner changed: look again
		case <-deadline:
			return fmt.Errorf("the Secret Service has no default collection after 20s")
		}
	}
	return nil
}

var (
	keyringOnce sync.Once
	keyringErr  error
	keyringDir  string
	keyringCmds []*exec.Cmd
	gkErr       syncBuffer
)

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Keyring makes the OS keyring of this test process a fresh, unlocked
// gnome-keyring on a private session bus (DBUS_SESSION_BUS_ADDRESS is set
// for the rest of the process: the D-Bus library keeps its first session
// connection). It skips when the programs are missing or the platform's
// keyring is not the Secret Service. Call [Stop] from TestMain.
func Keyring(t testing.TB) {
	t.Helper()
	if err := TryKeyring(); err != nil {
		t.Skip(err)
	}
}

// TryKeyring is Keyring for a test that goes on without it: nil, or why
// there is no keyring.
func TryKeyring() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the keyring test starts gnome-keyring, the Linux Secret Service; %s's own keyring is not touched by tests", runtime.GOOS)
	}
	for _, p := range []string{"dbus-daemon", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%s is not installed (apt-get install dbus gnome-keyring): %v", p, err)
		}
	}
	keyringOnce.Do(startKeyring)
	if keyringErr != nil {
		return fmt.Errorf("could not start gnome-keyring on a private D-Bus: %v", keyringErr)
	}
	return nil
}

func startKeyring() {
	dir, err := os.MkdirTemp("", "agent-tools-keyring-")
	if err != nil {
		keyringErr = err
		return
	}
	keyringDir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") && !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+dir, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	// A session bus without service activation: a call made before our
	// gnome-keyring owns its name must not start another (locked) one.
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, []byte(busConf), 0o600); err != nil {
		keyringErr = err
		return
	}
	bus := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--print-address=1")
	bus.Env = env
	dieWithUs(bus)
	out, err := bus.StdoutPipe()
	if err != nil {
		keyringErr = err
		return
	}
	if err := bus.Start(); err != nil {
		keyringErr = err
		return
	}
	keyringCmds = append(keyringCmds, bus)
	addr, err := firstLine(out, "")
	if err != nil {
		keyringErr = fmt.Errorf("dbus-daemon: %v", err)
		return
	}
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+addr)
	gk := exec.Command("gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	gk.Env = env
	dieWithUs(gk)
	gk.Stdin = strings.NewReader("agent-tools-test")
	gk.Stderr = &gkErr
	gout, err := gk.StdoutPipe()
	if err != nil {
		keyringErr = err
		return
	}
	if err := gk.Start(); err != nil {
		keyringErr = err
		return
	}
	keyringCmds = append(keyringCmds, gk)
	// gnome-keyring prints its control directory once it serves (it does
	// not when the directory is the standard one under XDG_RUNTIME_DIR).
	if _, err := firstLine(gout, "GNOME_KEYRING_CONTROL="); err != nil {
		keyringErr = fmt.Errorf("gnome-keyring-daemon: %v", err)
		return
	}
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	if keyringErr = waitLoginCollection(); keyringErr != nil {
		keyringErr = fmt.Errorf("%v (gnome-keyring-daemon: %s)", keyringErr, strings.TrimSpace(gkErr.String()))
	}
}

const busConf = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// firstLine reads lines until one starts with prefix (within 20 s), then
// drains the rest in the background.
func firstLine(r io.Reader, prefix string) (string, error) {
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		sc := bufio.NewScanner(r)
		found := false
		for sc.Scan() {
			if !found && strings.HasPrefix(sc.Text(), prefix) {
				found = true
				ch <- res{line: strings.TrimSpace(sc.Text())}
			}
		}
		if !found {
			ch <- res{err: fmt.Errorf("ended without printing %q", prefix)}
		}
	}()
	select {
	case r := <-ch:
		return r.line, r.err
	case <-time.After(20 * time.Second):
		return "", fmt.Errorf("did not print %q within 20s", prefix)
	}
}

// Stop ends the processes Keyring started (by their pids) and removes
// their directory.
func Stop() {
	for i := len(keyringCmds) - 1; i >= 0; i-- {
		c := keyringCmds[i]
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	keyringCmds = nil
	if keyringDir != "" {
		os.RemoveAll(keyringDir)
	}
}

// Pass makes a password store with a fresh GnuPG key (no passphrase) in
// temporary directories and sets GNUPGHOME and PASSWORD_STORE_DIR for the
// test. It returns a function that inserts an entry.
func Pass(t testing.TB) (insert func(path, value string)) {
	t.Helper()
	if err := PassMissing(); err != nil {
		t.Skip(err)
	}
	// A short path: gpg-agent's socket path must fit in sun_path.
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(home, "store")
	t.Setenv("GNUPGHOME", home)
	t.Setenv("PASSWORD_STORE_DIR", store)
	t.Cleanup(func() {
		// gpg started an agent for this home: end it (it is ours), then the files.
		_ = exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run()
		os.RemoveAll(home)
	})
	run := func(stdin string, name string, args ...string) {
		t.Helper()
		c := exec.Command(name, args...)
		c.Stdin = strings.NewReader(stdin)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	const uid = "agent-tools test <test@agent-tools.invalid>"
	run("", "gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-generate-key", uid, "ed25519", "default", "never")
	// An encryption subkey for pass.
	fpr, err := exec.Command("gpg", "--batch", "--with-colons", "--list-keys", uid).Output()
	if err != nil {
		t.Fatal(err)
	}
	var fp string
	for _, l := range strings.Split(string(fpr), "\n") {
		if strings.HasPrefix(l, "fpr:") {
			fp = strings.Split(l, ":")[9]
			break
		}
	}
	run("", "gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-add-key", fp, "cv25519", "encr", "never")
	run("", "pass", "init", fp)
	return func(path, value string) {
		t.Helper()
		run(value+"\n", "pass", "insert", "--multiline", "--force", path)
	}
}

// PassMissing says why Pass would skip (nil: pass and gpg are installed).
func PassMissing() error {
	for _, p := range []string{"pass", "gpg", "gpgconf"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%s is not installed (apt-get install pass gnupg): %v", p, err)
		}
	}
	return nil
}
