package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const cacheVersion = 1

// diskCache is one provider's tool list on disk:
// <dir>/<id>-<key>.json, where key digests the settings that decide which
// server answers (command, args, cwd, env, url, headers). Only the upstream's
// tools/list entries are stored; env and header values only ever enter the
// one-way digest.
type diskCache struct {
	dir, id, path string
	disabled      error // why there is no cache

	mu    sync.Mutex
	saved []byte // the tools last read or written, to skip identical writes
}

type cacheFile struct {
	Version  int             `json:"version"`
	Provider string          `json:"provider"`
	Saved    time.Time       `json:"saved"`
	Tools    json.RawMessage `json:"tools"`
}

func newDiskCache(o Options) *diskCache {
	dir := o.CacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return &diskCache{disabled: fmt.Errorf("no cache directory: %w", err)}
		}
		dir = filepath.Join(base, "agent-tools", "mcp")
	}
	return &diskCache{dir: dir, id: o.ID, path: filepath.Join(dir, o.ID+"-"+cacheKey(o)+".json")}
}

// cacheKey digests the connection settings of a provider.
func cacheKey(o Options) string {
	b, _ := json.Marshal(struct {
		V       int               `json:"v"`
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Dir     string            `json:"dir,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		URL     string            `json:"url,omitempty"`
		Headers map[string]string `json:"headers,omitempty"`
	}{cacheVersion, o.Command, o.Args, o.Dir, o.Env, o.URL, o.Headers})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// load returns the cached tools, or nil when there are none.
func (c *diskCache) load() ([]*sdk.Tool, error) {
	if c.disabled != nil {
		return nil, nil
	}
	data, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f cacheFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("cache file %s is corrupt (ignored): %v", c.path, err)
	}
	if f.Version != cacheVersion {
		return nil, nil
	}
	var tools []*sdk.Tool
	if err := json.Unmarshal(f.Tools, &tools); err != nil {
		return nil, fmt.Errorf("cache file %s is corrupt (ignored): %v", c.path, err)
	}
	if tools == nil {
		tools = []*sdk.Tool{}
	}
	c.mu.Lock()
	c.saved = f.Tools
	c.mu.Unlock()
	return tools, nil
}

// save writes the tools unless they are what the file already holds.
func (c *diskCache) save(tools []*sdk.Tool) error {
	if c.disabled != nil {
		return nil
	}
	raw, err := json.Marshal(tools)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.saved != nil && bytes.Equal(c.saved, raw) {
		return nil
	}
	data, err := json.MarshalIndent(cacheFile{Version: cacheVersion, Provider: c.id, Saved: time.Now().UTC(), Tools: raw}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(c.dir, "."+c.id+"-*.tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	c.saved = raw
	// Lists cached under this id's earlier settings are stale now.
	old, _ := filepath.Glob(filepath.Join(c.dir, c.id+"-*.json"))
	for _, o := range old {
		if o != c.path { // ids have no "-": the pattern matches this id's files only
			os.Remove(o)
		}
	}
	return nil
}
