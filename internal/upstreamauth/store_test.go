package upstreamauth

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/tests/secretstest"
)

func TestMain(m *testing.M) {
	// Stores keep their key in a file unless a test opts in (and starts
	// its own keyring): never the desktop's.
	os.Setenv(KeyEnv, "file")
	code := m.Run()
	secretstest.Stop()
	os.Exit(code)
}

func fileStore(t *testing.T, dir string) (*FileStore, *[]string) {
	t.Helper()
	s, err := NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.NoKeyring = true
	var warns []string
	s.Warn = func(msg string, args ...any) { warns = append(warns, fmt.Sprint(append([]any{msg}, args...)...)) }
	return s, &warns
}

func entry(p string) *Entry {
	return &Entry{Provider: p, Resource: "http://127.0.0.1/mcp", Token: &oauth2.Token{AccessToken: "store-canary-access-1", RefreshToken: "store-canary-refresh-1"}}
}

// A damaged token file is moved aside with a warning, and the next login is
// kept (it used to make every Save fail, so auth login threw the tokens away).
func TestDamagedStoreMovedAside(t *testing.T) {
	dir := t.TempDir()
	s, warns := fileStore(t, dir)
	if err := os.WriteFile(s.Path(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(entry("gh")); err != nil {
		t.Fatalf("Save over a damaged file: %v", err)
	}
	e, err := s.Load("gh")
	if err != nil || e == nil || e.Token.AccessToken != "store-canary-access-1" {
		t.Fatalf("Load after Save: %+v %v", e, err)
	}
	aside, _ := filepath.Glob(s.Path() + ".damaged-*")
	if len(aside) != 1 {
		t.Fatalf("damaged file not moved aside: %v", aside)
	}
	if b, _ := os.ReadFile(aside[0]); string(b) != "{not json" {
		t.Errorf("the damaged file's content was not kept: %q", b)
	}
	if len(*warns) != 1 || !strings.Contains((*warns)[0], "damaged") || !strings.Contains((*warns)[0], aside[0]) {
		t.Errorf("warnings: %q", *warns)
	}
}

// A write that fails is an error naming the path and the remedy.
func TestWriteFailureNamesPathAndRemedy(t *testing.T) {
	parent := t.TempDir()
	blocker := filepath.Join(parent, "state")
	if err := os.WriteFile(blocker, []byte("a file where the directory should be"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := fileStore(t, filepath.Join(blocker, "agent-tools"))
	err := s.Save(entry("gh"))
	if err == nil {
		t.Fatal("Save into an impossible directory succeeded")
	}
	for _, w := range []string{filepath.Join(blocker, "agent-tools"), "writable by you", "log in again"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	// The token file itself unwritable: a directory in its place.
	dir := t.TempDir()
	s2, _ := fileStore(t, dir)
	if err := s2.Save(entry("a")); err != nil {
		t.Fatal(err)
	}
	os.Remove(s2.Path())
	if err := os.Mkdir(s2.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s2.Path(), "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = s2.Save(entry("b"))
	if err == nil || !strings.Contains(err.Error(), s2.Path()) {
		t.Errorf("Save over a directory: %v", err)
	}
}

// A key file others can read is refused with the chmod to run.
func TestLooseKeyFileRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps access in ACLs, not mode bits")
	}
	dir := t.TempDir()
	s, _ := fileStore(t, dir)
	if err := s.Save(entry("gh")); err != nil {
		t.Fatal(err)
	}
	kf := filepath.Join(dir, keyFile)
	if err := os.Chmod(kf, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Load("gh")
	want := "run chmod 600 " + kf
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "0644") {
		t.Fatalf("Load with a 0644 key: %v; want %q", err, want)
	}
	if err := s.Save(entry("x")); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Save with a 0644 key: %v", err)
	}
	if err := os.Chmod(kf, 0o600); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Load("gh"); err != nil || e == nil {
		t.Errorf("after chmod 600: %v", err)
	}
}

// With an OS keyring the key lives there; a key file from before moves in.
func TestKeyInOSKeyring(t *testing.T) {
	secretstest.Keyring(t)
	dir := t.TempDir()
	// A store written while there was no keyring: the key is a file.
	old, _ := fileStore(t, dir)
	if err := old.Save(entry("gh")); err != nil {
		t.Fatal(err)
	}
	kf := filepath.Join(dir, keyFile)
	if _, err := os.Stat(kf); err != nil {
		t.Fatal("no key file written in fallback mode")
	}
	if loc := old.KeyLocation(); !strings.Contains(loc, "file "+kf) {
		t.Errorf("fallback KeyLocation = %q", loc)
	}
	s, _ := fileStore(t, dir)
	s.NoKeyring = false
	t.Cleanup(func() { _ = secrets.OS().Delete(secrets.KeyringService, s.keyAccount()) }) // gone already is fine
	if loc := s.KeyLocation(); !strings.Contains(loc, "moved into the OS keyring") {
		t.Errorf("KeyLocation before the move = %q", loc)
	}
	if e, err := s.Load("gh"); err != nil || e == nil {
		t.Fatalf("Load through the file key: %v", err)
	}
	if err := s.Save(entry("gl")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kf); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the key file is still there after the move: %v", err)
	}
	if loc := s.KeyLocation(); !strings.HasPrefix(loc, "OS keyring") {
		t.Errorf("KeyLocation = %q", loc)
	}
	for _, p := range []string{"gh", "gl"} {
		if e, err := s.Load(p); err != nil || e == nil {
			t.Errorf("Load(%s) with the key in the keyring: %v", p, err)
		}
	}
	// A fresh store: the key is made in the keyring, never on disk.
	dir2 := t.TempDir()
	s2, _ := fileStore(t, dir2)
	s2.NoKeyring = false
	t.Cleanup(func() { _ = secrets.OS().Delete(secrets.KeyringService, s2.keyAccount()) }) // gone already is fine
	if err := s2.Save(entry("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir2, keyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a key file was written though the keyring answers")
	}
}

type failingStore struct{ MemStore }

func (*failingStore) Save(*Entry) error {
	return errors.New("token store: cannot write /x/upstream-tokens.json: read-only file system; make its directory writable")
}

// A rotated refresh token that cannot be saved is logged as an error, and
// SaveError reports it (auth login then fails instead of exiting 0).
func TestRotatedRefreshTokenSaveFailureLogged(t *testing.T) {
	var logs bytes.Buffer
	h := &Handler{cfg: Config{Provider: "gh", Log: slog.New(slog.NewTextHandler(&logs, nil))}, store: &failingStore{}}
	e := entry("gh")
	h.save(e, &oauth2.Token{AccessToken: "store-canary-access-2", RefreshToken: "store-canary-refresh-2"})
	if h.SaveError() == nil {
		t.Fatal("SaveError is nil after a failed write")
	}
	l := logs.String()
	for _, w := range []string{"level=ERROR", "rotated the refresh token", "provider=gh", "read-only file system"} {
		if !strings.Contains(l, w) {
			t.Errorf("log lacks %q:\n%s", w, l)
		}
	}
	if strings.Contains(l, "store-canary") {
		t.Errorf("the log shows a token:\n%s", l)
	}
	h.store = &MemStore{}
	h.save(e, &oauth2.Token{AccessToken: "store-canary-access-3"})
	if h.SaveError() != nil {
		t.Errorf("SaveError after a good write: %v", h.SaveError())
	}
}
