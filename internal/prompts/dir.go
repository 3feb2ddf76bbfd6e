package prompts

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
)

// Dir is a directory of *.md prompt files, re-read cheaply (one stat per
// file) on every Load so an edited prompt is served without a restart.
type Dir struct {
	path string
	log  *slog.Logger

	mu      sync.Mutex
	files   map[string]cached
	current []*Prompt
}

type cached struct {
	mod    time.Time
	size   int64
	prompt *Prompt
	err    error
}

// maxPromptBytes bounds one prompt file.
const maxPromptBytes = 256 << 10

// NewDir serves the prompts in path (a missing directory holds none).
func NewDir(path string, log *slog.Logger) *Dir {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Dir{path: path, log: log, files: map[string]cached{}}
}

// Problem is a prompt file that was skipped, and why.
type Problem struct {
	File   string
	Reason string
}

// Load returns the prompts sorted by name, whether they changed since the last
// Load, and the files skipped.
func (d *Dir) Load() ([]*Prompt, bool, []Problem) {
	d.mu.Lock()
	defer d.mu.Unlock()
	entries, err := os.ReadDir(d.path)
	if err != nil && !os.IsNotExist(err) {
		return d.current, false, []Problem{{File: d.path, Reason: err.Error()}}
	}
	seen := map[string]bool{}
	var out []*Prompt
	var problems []Problem
	byName := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		seen[name] = true
		c := d.read(name)
		if c.err != nil {
			problems = append(problems, Problem{File: name, Reason: c.err.Error()})
			continue
		}
		if other, dup := byName[c.prompt.Name]; dup {
			problems = append(problems, Problem{File: name, Reason: fmt.Sprintf("prompt name %q is already used by %s", c.prompt.Name, other)})
			continue
		}
		byName[c.prompt.Name] = name
		out = append(out, c.prompt)
	}
	for name := range d.files {
		if !seen[name] {
			delete(d.files, name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	changed := !samePrompts(out, d.current)
	d.current = out
	return out, changed, problems
}

func (d *Dir) read(name string) cached {
	path := filepath.Join(d.path, name)
	st, err := os.Stat(path)
	if err != nil {
		return cached{err: err}
	}
	if c, ok := d.files[name]; ok && c.mod.Equal(st.ModTime()) && c.size == st.Size() && time.Since(st.ModTime()) > 2*time.Second {
		return c
	}
	c := cached{mod: st.ModTime(), size: st.Size()}
	switch {
	case st.Size() > maxPromptBytes:
		c.err = fmt.Errorf("larger than %d KiB", maxPromptBytes>>10)
	default:
		var src []byte
		if src, c.err = os.ReadFile(path); c.err == nil {
			c.prompt, c.err = Parse(strings.TrimSuffix(name, ".md"), src)
		}
	}
	if prev, ok := d.files[name]; c.err != nil && (!ok || prev.err == nil || prev.err.Error() != c.err.Error()) {
		d.log.Warn("prompt skipped", "file", path, "reason", c.err)
	}
	d.files[name] = c
	return c
}

func samePrompts(a, b []*Prompt) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}
