package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sharedstate "github.com/agent-tools/agent-tools/internal/state"
)

const cacheVersion = 1

// diskCache is one provider's tool list on disk:
// <dir>/<id>-<key>.json, where key digests the settings that decide which
// server answers (command, args, cwd, env, url, headers). Only what the
// upstream itself said is stored: its tools/list entries, and (optional
// fields, for the passthrough) its prompts/list entries and its initialize
// result (capabilities, instructions, serverInfo); env and header values
// only ever enter the one-way digest.
type diskCache struct {
	dir, id, path string
	disabled      error // why there is no cache

	mu    sync.Mutex
	saved []byte // the tools last read or written, to skip identical writes
	read  []byte // the file as read, until save needs its key (off the start-up path)
}

type cacheFile struct {
	Version  int             `json:"version"`
	Provider string          `json:"provider"`
	Saved    time.Time       `json:"saved"`
	Tools    json.RawMessage `json:"tools"`
	Prompts  json.RawMessage `json:"prompts,omitempty"`
	Init     json.RawMessage `json:"initialize,omitempty"`
}

// cached is what the cache holds; Prompts and Init are nil when unknown.
// Tools are decoded as convert needs them (schemas left as JSON); File is
// the cache file as read.
type cached struct {
	Tools   []*listedTool
	File    []byte
	Prompts []*sdk.Prompt
	Init    *sdk.InitializeResult
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

// load returns what is cached, or nil when there is no cache.
func (c *diskCache) load() (*cached, error) {
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
	// One pass over the file: the tools are decoded as convert needs them
	// (schemas left as JSON, listedTool); the file's content key is taken
	// from data later, only if needed (off the start-up path).
	var f struct {
		Version int             `json:"version"`
		Tools   []*listedTool   `json:"tools"`
		Prompts json.RawMessage `json:"prompts,omitempty"`
		Init    json.RawMessage `json:"initialize,omitempty"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("cache file %s is corrupt (ignored): %v", c.path, err)
	}
	if f.Version != cacheVersion {
		return nil, nil
	}
	// No tools is a miss, not a warm start: an earlier version wrote
	// "tools":null after a call (the live list equalled the cached one),
	// and trusting it hid the upstream's tools for good (nothing to call,
	// so it never started again). An upstream with no tools costs a cold
	// start, and the file is rewritten from what it sends.
	if len(f.Tools) == 0 {
		return nil, nil
	}
	out := &cached{Tools: f.Tools, File: data}
	reformat := false
	for _, t := range out.Tools {
		if t == nil {
			continue
		}
		// Written indented by an earlier version: the schemas would be
		// served with the indentation. Compact them, and have the next
		// save rewrite the file.
		if compactSchemas(t) {
			reformat = true
		}
	}
	// The optional parts are only hints: a bad one is dropped, not fatal.
	if len(f.Prompts) > 0 && json.Unmarshal(f.Prompts, &out.Prompts) != nil {
		out.Prompts = nil
	}
	if len(f.Init) > 0 && json.Unmarshal(f.Init, &out.Init) != nil {
		out.Init = nil
	}
	c.mu.Lock()
	c.saved, c.read = nil, data
	if reformat {
		c.read = nil // no key: the next save writes the file
	}
	c.mu.Unlock()
	return out, nil
}

// compactSchemas compacts t's schemas if they are indented and reports
// whether they were.
func compactSchemas(t *listedTool) bool {
	changed := false
	for _, s := range []*json.RawMessage{&t.InputSchema, &t.OutputSchema} {
		if bytes.IndexByte(*s, '\n') >= 0 {
			var buf bytes.Buffer
			if json.Compact(&buf, *s) == nil {
				*s, changed = buf.Bytes(), true
			}
		}
	}
	return changed
}

// contentKey is what a cache file says, without its time stamp (to skip
// identical writes): a digest of its parts as they are (the JSON parts are
// written compact, and a file read back gives the same bytes), not of the
// whole file encoded again (at 10,000 tools, 3 MB validated and copied).
func contentKey(f cacheFile) []byte {
	h := sha256.New()
	for _, part := range [][]byte{strconv.AppendInt(nil, int64(f.Version), 10), []byte(f.Provider), f.Tools, f.Prompts, f.Init} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
		h.Write(part)
	}
	return h.Sum(nil) // kept for the provider's life: a digest, not the whole list
}

// encode is json.Marshal(f) for parts that are valid compact JSON (as save
// makes them), without validating and copying them again.
func (f *cacheFile) encode() ([]byte, error) {
	provider, err := json.Marshal(f.Provider)
	if err != nil {
		return nil, err
	}
	saved, err := json.Marshal(f.Saved)
	if err != nil {
		return nil, err
	}
	tools := f.Tools
	if tools == nil {
		tools = json.RawMessage("null")
	}
	var b bytes.Buffer
	b.Grow(len(tools) + len(f.Prompts) + len(f.Init) + len(provider) + 128)
	b.WriteString(`{"version":`)
	b.WriteString(strconv.Itoa(f.Version))
	b.WriteString(`,"provider":`)
	b.Write(provider)
	b.WriteString(`,"saved":`)
	b.Write(saved)
	b.WriteString(`,"tools":`)
	b.Write(tools)
	if len(f.Prompts) > 0 {
		b.WriteString(`,"prompts":`)
		b.Write(f.Prompts)
	}
	if len(f.Init) > 0 {
		b.WriteString(`,"initialize":`)
		b.Write(f.Init)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// save writes what the upstream said unless the file already holds it.
// tools is a list the upstream sent; nil (no such list) writes nothing, so
// a cache is only ever replaced by a list the upstream actually sent.
// Prompts and init may be nil (unknown).
func (c *diskCache) save(tools []*listedTool, prompts []*sdk.Prompt, init *sdk.InitializeResult) error {
	if c.disabled != nil || tools == nil {
		return nil
	}
	f := cacheFile{Version: cacheVersion, Provider: c.id}
	var err error
	if f.Tools, err = json.Marshal(tools); err != nil {
		return err
	}
	if prompts != nil {
		if f.Prompts, err = json.Marshal(prompts); err != nil {
			return err
		}
	}
	if init != nil {
		if f.Init, err = json.Marshal(init); err != nil {
			return err
		}
	}
	key := contentKey(f)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read != nil { // the key of what load read, taken now rather than at start-up
		var old cacheFile
		if json.Unmarshal(c.read, &old) == nil {
			c.saved = contentKey(old)
		}
		c.read = nil
	}
	if c.saved != nil && bytes.Equal(c.saved, key) {
		return nil
	}
	f.Saved = time.Now().UTC()
	// Compact: a warm start decodes this file, and its schemas are used as
	// they are written (listedTool).
	data, err := f.encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	if err := sharedstate.WriteFile(c.path, append(data, '\n')); err != nil {
		return err
	}
	c.saved = key
	// Lists cached under this id's earlier settings are stale now.
	old, _ := filepath.Glob(filepath.Join(c.dir, c.id+"-*.json"))
	for _, o := range old {
		if o != c.path { // ids have no "-": the pattern matches this id's files only
			os.Remove(o)
		}
	}
	return nil
}
