package upstreamauth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/oauth2"
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
type FileStore struct {
	dir string
	mu  sync.Mutex // one read-modify-write at a time in this process
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
	return &FileStore{dir: dir}, nil
}

// Path is the token file's path.
func (s *FileStore) Path() string { return filepath.Join(s.dir, storeFile) }

type fileData struct {
	Version int               `json:"version"`
	Entries map[string][]byte `json:"entries"` // provider → nonce‖ciphertext
}

func (s *FileStore) aead(create bool) (cipher.AEAD, error) {
	path := filepath.Join(s.dir, keyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("token store: %w", err)
		}
		key = make([]byte, 32)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) { // another process made it first
			return s.aead(false)
		}
		if err != nil {
			return nil, fmt.Errorf("token store: %w", err)
		}
		_, werr := f.Write(key)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("token store: writing the key: %w", werr)
		}
	} else if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("token store: %s is not a 32-byte key", path)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
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
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("token store: %s is damaged: %v", s.Path(), err)
	}
	if d.Entries == nil {
		d.Entries = map[string][]byte{}
	}
	return d, nil
}

func (s *FileStore) write(d *fileData) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, storeFile+".*")
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("token store: %w", err)
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("token store: %w", werr)
	}
	return os.Rename(tmp.Name(), s.Path()) // atomic: a reader sees the old or the new file
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
