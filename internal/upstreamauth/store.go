package upstreamauth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/oauth2"

	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/state"
)

// Entry is one provider's login: the client it is registered as, where its
// tokens come from, and the tokens. Entries are encrypted at rest.
type Entry struct {
	Provider     string        `json:"provider"`
	Resource     string        `json:"resource"` // the upstream's URL the tokens are for (RFC 8707)
	Issuer       string        `json:"issuer,omitempty"`
	ClientID     string        `json:"clientId,omitempty"`
	ClientSecret string        `json:"clientSecret,omitempty"`
	AuthURL      string        `json:"authUrl,omitempty"`
	TokenURL     string        `json:"tokenUrl,omitempty"`
	AuthStyle    int           `json:"authStyle,omitempty"`
	RedirectURL  string        `json:"redirectUrl,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token,omitempty"`
	Updated      time.Time     `json:"updated"`
}

// Status is what may be shown of an entry: never a token or a secret.
type Status struct {
	Provider string
	Issuer   string
	Scopes   []string
	Expiry   time.Time // zero: the token does not expire (or is unknown)
	Refresh  bool      // a refresh token is held
}

// Status reports e without its secrets.
func (e *Entry) Status() Status {
	s := Status{Provider: e.Provider, Issuer: e.Issuer, Scopes: e.Scopes}
	if e.Token != nil {
		s.Expiry, s.Refresh = e.Token.Expiry, e.Token.RefreshToken != ""
	}
	return s
}

// Store keeps logins. Load returns (nil, nil) when provider has none.
type Store interface {
	Load(provider string) (*Entry, error)
	Save(e *Entry) error
	Delete(provider string) error
	List() ([]*Entry, error)
}

// DefaultDir is $XDG_STATE_HOME/agent-tools, or ~/.local/state/agent-tools.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agent-tools"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("token store: no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "agent-tools"), nil
}

const (
	storeFile = "upstream-tokens.json"
	keyFile   = "upstream-tokens.key"
)

// FileStore keeps every login in one file (mode 0600), each entry sealed
// with AES-256-GCM under a random key kept beside it (also 0600). The key
// file is what makes the token file unreadable to a copy of it alone (a
// backup, a bug report); it does not protect against the user's own
// processes, which is the OS account's job.
//
// The key lives in the OS keyring when one answers (service "agent-tools",
// account "upstream-tokens-key:<dir>"); the file beside the tokens is only
// the fallback, and a key file found while the keyring answers is moved
// into it. A key file readable by others is refused with the chmod to run.
// A token file that does not parse is moved aside (upstream-tokens.json.
// damaged-<time>) with a warning, so that the next login is kept.
type FileStore struct {
	dir string
	mu  sync.Mutex // one read-modify-write at a time in this process
	// NoKeyring keeps the key in the file beside the tokens (tests, and
	// AGENT_TOOLS_TOKEN_KEY=file).
	NoKeyring bool
	// Warn receives warnings (a damaged file moved aside); nil: slog.Default.
	Warn func(msg string, args ...any)
}

// NewFileStore returns the store in dir ("" = DefaultDir()).
func NewFileStore(dir string) (*FileStore, error) {
	if dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return &FileStore{dir: dir, NoKeyring: os.Getenv(KeyEnv) == "file"}, nil
}

// KeyEnv set to "file" keeps the store's key in the file beside it even
// when an OS keyring answers.
const KeyEnv = "AGENT_TOOLS_TOKEN_KEY"

func (s *FileStore) warn(msg string, args ...any) {
	if s.Warn != nil {
		s.Warn(msg, args...)
		return
	}
	slog.Default().Warn(msg, args...)
}

// keyAccount is the keyring account of this store's key.
func (s *FileStore) keyAccount() string {
	abs, err := filepath.Abs(s.dir)
	if err != nil {
		abs = s.dir
	}
	return "upstream-tokens-key:" + abs
}

// useKeyring says whether the OS keyring holds (or will hold) the key.
func (s *FileStore) useKeyring() error {
	if s.NoKeyring {
		return fmt.Errorf("%s=file", KeyEnv)
	}
	return secrets.KeyringAvailable()
}

// KeyLocation says where the store's key is kept, for doctor: the OS
// keyring, or the file beside the tokens and why.
func (s *FileStore) KeyLocation() string {
	kf := filepath.Join(s.dir, keyFile)
	if err := s.useKeyring(); err != nil {
		return fmt.Sprintf("file %s (fallback: %v)", kf, err)
	}
	if _, err := secrets.OS().Get(secrets.KeyringService, s.keyAccount()); err == nil {
		return "OS keyring (" + secrets.KeyringName() + ")"
	}
	if _, err := os.Stat(kf); err == nil {
		return fmt.Sprintf("file %s (moved into the OS keyring on the next login)", kf)
	}
	return "OS keyring (" + secrets.KeyringName() + "; no key yet)"
}

// checkKeyFile refuses a key file that others can read.
func checkKeyFile(path string) error {
	if runtime.GOOS == "windows" {
		return nil // ACLs, not mode bits
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil // reported by the read
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("token store: the key file %s is open to other users (mode %#o); refusing to use it: run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	return nil
}

// Path is the token file's path.
func (s *FileStore) Path() string { return filepath.Join(s.dir, storeFile) }

type fileData struct {
	Version int               `json:"version"`
	Entries map[string][]byte `json:"entries"` // provider → nonce‖ciphertext
}

func (s *FileStore) aead(create bool) (cipher.AEAD, error) {
	key, err := s.key(create)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("token store: no key, neither in the OS keyring nor in %s: log in again", filepath.Join(s.dir, keyFile))
	}
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// key returns the store's key: from the OS keyring when it answers (a key
// file found then is moved into it on a write), else from the file.
func (s *FileStore) key(create bool) ([]byte, error) {
	path := filepath.Join(s.dir, keyFile)
	if s.useKeyring() == nil {
		v, err := secrets.OS().Get(secrets.KeyringService, s.keyAccount())
		switch {
		case err == nil:
			key, derr := base64.StdEncoding.DecodeString(v)
			if derr != nil || len(key) != 32 {
				return nil, fmt.Errorf("token store: the keyring item %s/%s is not a 32-byte key: delete it (agent-tools secrets rm %s/%s) and log in again", secrets.KeyringService, s.keyAccount(), secrets.KeyringService, s.keyAccount())
			}
			return key, nil
		case !errors.Is(err, secrets.ErrNotFound):
			return nil, fmt.Errorf("token store: reading the key from %s: %v", secrets.KeyringName(), err)
		case !create:
			// not in the keyring: a key file from before, if any
		default:
			key, err := s.fileKey(path, false)
			if errors.Is(err, fs.ErrNotExist) {
				key = make([]byte, 32)
				rand.Read(key)
			} else if err != nil {
				return nil, err
			}
			if err := secrets.OS().Set(secrets.KeyringService, s.keyAccount(), base64.StdEncoding.EncodeToString(key)); err != nil {
				return nil, fmt.Errorf("token store: storing the key in %s: %v (set %s=file to keep it in %s)", secrets.KeyringName(), err, KeyEnv, path)
			}
			if got, err := secrets.OS().Get(secrets.KeyringService, s.keyAccount()); err != nil || got != base64.StdEncoding.EncodeToString(key) {
				return nil, fmt.Errorf("token store: the key stored in %s does not read back (%v); keeping %s", secrets.KeyringName(), err, path)
			}
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.warn("token store: the key is now in the OS keyring, but the old key file could not be removed", "path", path, "error", err.Error())
			}
			return key, nil
		}
	}
	return s.fileKey(path, create)
}

// fileKey reads (or, with create, makes) the key file beside the tokens.
func (s *FileStore) fileKey(path string, create bool) ([]byte, error) {
	if err := checkKeyFile(path); err != nil {
		return nil, err
	}
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("token store: %w", err)
		}
		key = make([]byte, 32)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) { // another process made it first
			return s.fileKey(path, false)
		}
		if err != nil {
			return nil, writeErr(path, err)
		}
		_, werr := f.Write(key)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, writeErr(path, werr)
		}
	} else if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("token store: cannot read the key %s: %v; make its directory readable and writable by you (or set XDG_STATE_HOME to a directory that is) and log in again", path, errText(err))
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("token store: %s is not a 32-byte key", path)
	}
	return key, nil
}

// writeErr is a failed write in words: the path, and what to do.
func writeErr(path string, err error) error {
	return fmt.Errorf("token store: cannot write %s: %v; make its directory writable by you (or set XDG_STATE_HOME to a directory that is) and log in again", path, errText(err))
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (s *FileStore) read() (*fileData, error) {
	d := &fileData{Version: 1, Entries: map[string][]byte{}}
	b, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	if err := json.Unmarshal(b, d); err != nil || d.Version > 1 && d.Entries == nil {
		// Moved aside, not overwritten: nothing a person had is lost, and
		// the next login is kept.
		aside := s.Path() + ".damaged-" + time.Now().UTC().Format("20060102T150405Z")
		if rerr := os.Rename(s.Path(), aside); rerr != nil {
			return nil, fmt.Errorf("token store: %s is damaged (%v) and could not be moved aside: %v; move it away by hand and log in again", s.Path(), err, errText(rerr))
		}
		s.warn("token store: the file was damaged; moved aside, the logins it held must be made again",
			"path", s.Path(), "aside", aside, "error", fmt.Sprint(err))
		return &fileData{Version: 1, Entries: map[string][]byte{}}, nil
	}
	if d.Entries == nil {
		d.Entries = map[string][]byte{}
	}
	return d, nil
}

func (s *FileStore) write(d *fileData) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return writeErr(s.Path(), err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	// state.WriteFile: synced before the rename (a crash never leaves an
	// empty token store), private (0600).
	if err := state.WriteFile(s.Path(), b); err != nil {
		return writeErr(s.Path(), err)
	}
	return nil
}

// Seal and Open encrypt one entry; the provider id is the additional data,
// so an entry copied under another id does not open.
func seal(a cipher.AEAD, e *Entry) ([]byte, error) {
	plain, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, a.NonceSize())
	rand.Read(nonce)
	return a.Seal(nonce, nonce, plain, []byte(e.Provider)), nil
}

func open(a cipher.AEAD, provider string, sealed []byte) (*Entry, error) {
	if len(sealed) < a.NonceSize() {
		return nil, fmt.Errorf("token store: entry %s is damaged", provider)
	}
	plain, err := a.Open(nil, sealed[:a.NonceSize()], sealed[a.NonceSize():], []byte(provider))
	if err != nil {
		return nil, fmt.Errorf("token store: entry %s does not decrypt (key changed?): log in again", provider)
	}
	e := &Entry{}
	if err := json.Unmarshal(plain, e); err != nil {
		return nil, fmt.Errorf("token store: entry %s is damaged: %v", provider, err)
	}
	return e, nil
}

// Load implements Store.
func (s *FileStore) Load(provider string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	sealed, ok := d.Entries[provider]
	if !ok {
		return nil, nil
	}
	a, err := s.aead(false)
	if err != nil {
		return nil, err
	}
	e, err := open(a, provider, sealed)
	if err == nil {
		registerSecrets(e)
	}
	return e, err
}

// Save implements Store.
func (s *FileStore) Save(e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.aead(true)
	if err != nil {
		return err
	}
	d, err := s.read()
	if err != nil {
		return err
	}
	if e.Updated.IsZero() {
		e.Updated = time.Now().UTC()
	}
	sealed, err := seal(a, e)
	if err != nil {
		return err
	}
	d.Entries[e.Provider] = sealed
	return s.write(d)
}

// Delete implements Store.
func (s *FileStore) Delete(provider string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return err
	}
	if _, ok := d.Entries[provider]; !ok {
		return nil
	}
	delete(d.Entries, provider)
	return s.write(d)
}

// List implements Store, sorted by provider.
func (s *FileStore) List() ([]*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil || len(d.Entries) == 0 {
		return nil, err
	}
	a, err := s.aead(false)
	if err != nil {
		return nil, err
	}
	var out []*Entry
	for p, sealed := range d.Entries {
		e, err := open(a, p, sealed)
		if err != nil {
			return nil, err
		}
		registerSecrets(e)
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider < out[j].Provider })
	return out, nil
}

// MemStore is a Store in memory (tests, the conformance client).
type MemStore struct {
	mu sync.Mutex
	m  map[string]Entry
}

func (s *MemStore) Load(p string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[p]
	if !ok {
		return nil, nil
	}
	return &e, nil
}

func (s *MemStore) Save(e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]Entry{}
	}
	s.m[e.Provider] = *e
	return nil
}

func (s *MemStore) Delete(p string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, p)
	return nil
}

func (s *MemStore) List() ([]*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Entry
	for _, e := range s.m {
		out = append(out, &e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider < out[j].Provider })
	return out, nil
}

// Watch calls changed(provider) from its own goroutine whenever another
// process (or handler) stores a new login for provider, until ctx ends: a
// running serve learns of `agent-tools auth login` at once. Entries are
// compared by access token, so a refresh counts as a change too; callers
// decide whether a change matters to them.
func (s *FileStore) Watch(ctx context.Context, changed func(provider string)) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if err := w.Add(s.dir); err != nil { // the directory: the file is replaced by rename
		w.Close()
		return fmt.Errorf("token store: %w", err)
	}
	snapshot := loginSnapshots(s.List, changed) // an unreadable store: the next event retries
	snapshot(false)
	go func() {
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == storeFile && ev.Op&(fsnotify.Create|fsnotify.Write|fsnotify.Rename) != 0 {
					snapshot(true)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return nil
}

// loginSnapshots returns what a store's Watch runs on each event or poll:
// it lists the logins and calls changed for each provider whose access
// token differs from the previous listing (a new login or a refresh), when
// notify is set; the first call (notify false) only records. A listing that
// fails changes nothing: the next one retries.
func loginSnapshots(list func() ([]*Entry, error), changed func(provider string)) func(notify bool) {
	seen := map[string]string{}
	return func(notify bool) {
		entries, err := list()
		if err != nil {
			return
		}
		for _, e := range entries {
			at := ""
			if e.Token != nil {
				at = e.Token.AccessToken
			}
			if old, ok := seen[e.Provider]; notify && (!ok || old != at) {
				changed(e.Provider)
			}
			seen[e.Provider] = at
		}
	}
}
