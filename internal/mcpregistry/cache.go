package mcpregistry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-tools/agent-tools/internal/state"
)

// Cache keeps registry answers on disk, one file per URL, with the ETag
// they came with: searches work offline, and a registry that has not
// changed answers 304.
type Cache struct {
	Dir string
	now func() time.Time
}

// NewCache is a cache in dir.
func NewCache(dir string) *Cache { return &Cache{Dir: dir, now: time.Now} }

// DefaultCacheDir is $XDG_STATE_HOME/agent-tools/registry, or
// ~/.local/state/agent-tools/registry ("" when neither is known).
func DefaultCacheDir(lookupEnv func(string) (string, bool)) string {
	if d, ok := lookupEnv("XDG_STATE_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "agent-tools", "registry")
	}
	if h, ok := lookupEnv("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "agent-tools", "registry")
	}
	return ""
}

type cacheEntry struct {
	URL  string          `json:"url"`
	ETag string          `json:"etag,omitempty"`
	Time time.Time       `json:"time"`
	Body json.RawMessage `json:"body"`
}

func (c *Cache) file(u string) string {
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(c.Dir, hex.EncodeToString(sum[:16])+".json")
}

func (c *Cache) load(u string) *cacheEntry {
	if c == nil || c.Dir == "" {
		return nil
	}
	data, err := os.ReadFile(c.file(u))
	if err != nil {
		return nil
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.URL != u || len(e.Body) == 0 {
		return nil // unreadable or a hash collision: as if absent
	}
	return &e
}

func (c *Cache) store(u, etag string, body []byte) {
	if c == nil || c.Dir == "" || !json.Valid(body) {
		return
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return
	}
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	data, err := json.Marshal(cacheEntry{URL: u, ETag: etag, Time: now().UTC(), Body: body})
	if err != nil {
		return
	}
	_ = state.WriteFile(c.file(u), data) // a cache that cannot be written is only slower
}
