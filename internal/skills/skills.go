// Package skills loads a provider's skills (docs/providers/builtins.md) and runs them
// in the jsrun sandbox.
//
// A skill is a JavaScript file (*.js or *.mjs) in a directory (or listed in
// Options.Files, as a plugin.json lists them); its name is the file
// name without the extension. The file defines
//
//	export const meta = {
//	  description: "One line: what the whole task does.",
//	  args: 'mode?: "a"|"b" (default "a"). id (required).', // a string, or an object
//	  related: [{ target: "gh:open-pr", why: "after the fix, open the PR" }],
//	  mutates: true, // default false; a mutating skill needs confirmation
//	};
//	export async function run(tools, args) {
//	  const issues = await tools.call("gh_list_issues", { state: "open" });
//	  return { count: issues.length };
//	}
//
// `export` is optional: the files are scripts, and the ES-module-ish shape of
// the seed is accepted by blanking `export` at the start of a line (see
// [Transform]). The top level runs at load (to read meta) and again at each
// run, so it should only declare things.
//
// In run, `tools.call(canonicalName, args)` calls a tool through the
// ToolCaller the runtime passes (the full pipeline: validation, policy,
// audit). It is synchronous (await works on it too) and returns the result
// text, parsed when it is a JSON object or array (a scalar text such as a
// long id stays a string). A failure throws an Error with `code`, `tool` and
// `envelope` (the {"error": {...}} body); uncaught, that failure becomes the
// skill's, with its code. With Options.OwnTools (Wrap sets it), a name that
// is one of the provider's own tool names is called by its canonical name,
// so the seed's `adapter.call("search_workflows", ...)` works unchanged.
// `tools.canonical(name)` gives that canonical name, and `tools.provider` is
// the provider's id. A skill can fail on purpose with an Error whose `code`
// is INVALID_ARGUMENTS (or another envelope code) and whose `hint` says what
// to do.
//
// A run is bounded by Options.Timeout (default 30 s) and Options.MaxCalls
// tool calls (default 20); the result is capped at Options.MaxOutput
// characters. The return value is the result: a string as is, anything else
// as JSON (an object also as structured content). Every sandbox limit of
// package jsrun applies too.
//
// Doctor: Diagnostics reports each file "ok", "skipped" (with the reason) or
// "warning" (loaded, but without meta or with dropped related entries); and
// CheckRelated, given every provider's skills, reports related targets that
// name no loaded skill as "warning" lines.
package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Defaults.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxCalls  = 20
	DefaultMaxOutput = 30000
	// racyWindow: a file modified this recently is re-read on every scan.
	racyWindow = 2 * time.Second
	// maxFileSize is the largest skill file read.
	maxFileSize = jsrun.MaxSourceLen
)

// Options configure a Dir.
type Options struct {
	// Timeout bounds one run (0: DefaultTimeout).
	Timeout time.Duration
	// MaxCalls bounds the tool calls of one run (0: DefaultMaxCalls; negative: no bound).
	MaxCalls int
	// MaxOutput bounds the result's characters (0: DefaultMaxOutput).
	MaxOutput int
	// Logger receives skip reasons (once per change) and skills' console output at debug (nil: slog.Default()).
	Logger *slog.Logger
	// Files, when set, lists the skill files (relative to the directory, as
	// a seed plugin.json's "skills" does) instead of every *.js/*.mjs file in it.
	Files []string
	// OwnTools lists the provider's own tools (Wrap sets it). tools.call
	// then also accepts an own tool name, as the seed's adapter.call did, and
	// calls it by its canonical name.
	OwnTools func(ctx context.Context) ([]catalog.Tool, error)
	// Canonical names one of the provider's own tools as the catalog does
	// (the naming scheme in force and the provider's renames; the app sets
	// it from the registry). Nil: the default scheme.
	Canonical func(tool string) (string, error)
	// Runner runs the skills (nil: jsrun.Isolated, each run in its own
	// limited process where the system allows).
	Runner jsrun.Runner
	// Memory and CPU bound a run's process, as code.memory and code.cpu
	// bound a script's (0: jsrun.DefaultMemory, jsrun.DefaultCPU).
	Memory int64
	CPU    time.Duration
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxCalls == 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Dir is the skills of one directory, for one provider: a provider.Skiller
// and provider.Diagnoser that a provider can embed. The directory is
// re-scanned on every Skills, RunSkill and Diagnostics (a stat per file; a
// file is re-parsed only when it changed), so edit, save, run works. It is
// safe for concurrent use.
type Dir struct {
	info catalog.ProviderInfo
	dir  string
	opts Options
	log  *slog.Logger

	// listed is when the last Skills listing began (unix nanoseconds; 0:
	// never): see fresh.
	listed atomic.Int64

	mu      sync.Mutex
	entries map[string]*entry // by file name
	dups    map[string]string // file -> the file that already defines its skill name
	absent  bool
	dirErr  string
}

type entry struct {
	file   string
	name   string
	size   int64
	mtime  time.Time
	racy   bool
	skill  *Skill // nil when skipped
	reason string
}

var (
	_ provider.Skiller   = (*Dir)(nil)
	_ provider.Diagnoser = (*Dir)(nil)
)

// NewDir returns the skills of dir for the provider described by info (its
// ID names the skills' provider; ID and HostLocal give tools.canonical). It
// does no I/O.
func NewDir(info catalog.ProviderInfo, dir string, o Options) *Dir {
	o = o.withDefaults()
	if dir != "" && !filepath.IsAbs(dir) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	return &Dir{info: info, dir: dir, opts: o, log: o.Logger.With("provider", info.ID, "skills", dir), entries: map[string]*entry{}}
}

// Skills lists the loaded skills, sorted by name. An unreadable directory
// yields no skills (Diagnostics says why), never an error: the provider's
// tools must not fail because of its skills.
func (d *Dir) Skills(ctx context.Context) ([]catalog.Skill, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.listed.Store(now().UnixNano()) // before the scan: an edit during it counts as after
	d.scanLocked(ctx)
	var out []catalog.Skill
	for _, e := range d.entries {
		if d.activeLocked(e) {
			s := e.skill.Meta
			s.Provider = d.info.ID
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Skill returns a loaded skill by name.
func (d *Dir) Skill(ctx context.Context, name string) (*Skill, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scanLocked(ctx)
	for _, e := range d.entries {
		if d.activeLocked(e) && e.name == name {
			return e.skill, true
		}
	}
	return nil, false
}

// activeLocked reports whether an entry is a skill in the catalog.
func (d *Dir) activeLocked(e *entry) bool { return e.skill != nil && d.dups[e.file] == "" }

// Diagnostics rescans and reports every candidate file: "ok" (with a
// warning as reason when there is one), "skipped" with the reason, or one
// "failed" line when the directory cannot be read.
func (d *Dir) Diagnostics() []provider.Diagnostic {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scanLocked(context.Background())
	id := d.info.ID
	if d.dirErr != "" {
		return []provider.Diagnostic{{Provider: id, Item: d.dir, Status: "failed", Reason: d.dirErr}}
	}
	if d.absent {
		return []provider.Diagnostic{{Provider: id, Item: d.dir, Status: "ok", Reason: "skills directory absent: no skills"}}
	}
	out := make([]provider.Diagnostic, 0, len(d.entries))
	for _, e := range d.entries {
		item := "skill " + e.file
		switch {
		case e.skill == nil:
			out = append(out, provider.Diagnostic{Provider: id, Item: item, Status: "skipped", Reason: e.reason})
		case d.dups[e.file] != "":
			out = append(out, provider.Diagnostic{Provider: id, Item: item, Status: "skipped", Reason: fmt.Sprintf("skill %q is already defined by %s", e.name, d.dups[e.file])})
		case len(e.skill.Warnings) > 0:
			out = append(out, provider.Diagnostic{Provider: id, Item: item, Status: "warning", Reason: strings.Join(e.skill.Warnings, "; ")})
		default:
			out = append(out, provider.Diagnostic{Provider: id, Item: item, Status: "ok"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Item < out[j].Item })
	if len(out) == 0 {
		out = append(out, provider.Diagnostic{Provider: id, Item: d.dir, Status: "ok", Reason: "no skills"})
	}
	return out
}

// isSkillFile reports names that are skill candidates.
func isSkillFile(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	ext := filepath.Ext(name)
	return (ext == ".js" || ext == ".mjs") && len(name) > len(ext)
}

// scanLocked re-reads the directory (or the listed files). d.mu is held.
func (d *Dir) scanLocked(ctx context.Context) {
	if d.dir == "" {
		d.absent = true
		return
	}
	if d.opts.Files != nil {
		d.absent, d.dirErr = false, ""
		seen := make(map[string]bool, len(d.opts.Files))
		for _, f := range d.opts.Files {
			f = filepath.ToSlash(filepath.Clean(filepath.FromSlash(f)))
			if seen[f] {
				continue
			}
			seen[f] = true
			d.refreshLocked(ctx, f)
		}
		d.dedupLocked(seen)
		return
	}
	des, err := os.ReadDir(d.dir)
	if err != nil {
		clear(d.entries)
		if errors.Is(err, fs.ErrNotExist) {
			d.absent, d.dirErr = true, ""
			return
		}
		if msg := "cannot read skills directory: " + err.Error(); msg != d.dirErr {
			d.dirErr = msg
			d.log.Warn("cannot read skills directory", "err", err)
		}
		d.absent = false
		return
	}
	d.absent, d.dirErr = false, ""
	seen := make(map[string]bool, len(des))
	for _, de := range des {
		if !isSkillFile(de.Name()) {
			continue
		}
		seen[de.Name()] = true
		d.refreshLocked(ctx, de.Name())
	}
	d.dedupLocked(seen)
}

// dedupLocked forgets files no longer seen and marks the second file of a
// skill name (x.js and x.mjs) as a duplicate. d.mu is held.
func (d *Dir) dedupLocked(seen map[string]bool) {
	for f := range d.entries {
		if !seen[f] {
			delete(d.entries, f)
		}
	}
	// Two files for one name (x.js and x.mjs): the first in name order wins.
	byName := map[string]string{}
	files := make([]string, 0, len(d.entries))
	for f := range d.entries {
		files = append(files, f)
	}
	sort.Strings(files)
	dups := map[string]string{}
	for _, f := range files {
		e := d.entries[f]
		if e.skill == nil {
			continue
		}
		if other, dup := byName[e.name]; dup {
			dups[f] = other
			if d.dups[f] != other {
				d.log.Warn("skill skipped", "file", f, "reason", fmt.Sprintf("skill %q is already defined by %s", e.name, other))
			}
			continue
		}
		byName[e.name] = f
	}
	d.dups = dups
}

// refreshLocked re-stats one file and re-parses it when it changed.
func (d *Dir) refreshLocked(ctx context.Context, file string) {
	path := filepath.Join(d.dir, filepath.FromSlash(file))
	old := d.entries[file]
	fi, err := os.Stat(path)
	base := filepath.Base(filepath.FromSlash(file))
	name := strings.TrimSuffix(base, filepath.Ext(base))
	e := &entry{file: file, name: name}
	switch {
	case !isSkillFile(base):
		e.reason = "not a .js or .mjs file"
	case err != nil:
		e.reason = "cannot stat: " + err.Error()
	case !fi.Mode().IsRegular():
		e.reason = "not a regular file"
	default:
		e.size, e.mtime = fi.Size(), fi.ModTime()
		if old != nil && !old.mtime.IsZero() && old.size == e.size && old.mtime.Equal(e.mtime) && !old.racy {
			return
		}
		e.racy = time.Since(e.mtime) < racyWindow || e.mtime.After(time.Now())
		switch {
		case e.size > int64(maxFileSize):
			e.reason = fmt.Sprintf("file is %d bytes; a skill may have at most %d", e.size, maxFileSize)
		default:
			src, err := os.ReadFile(path)
			if err != nil {
				e.reason = "cannot read: " + err.Error()
				break
			}
			s, err := ParseSkill(ctx, name, file, src)
			if err != nil {
				e.reason = err.Error()
				break
			}
			e.skill = s
		}
	}
	d.entries[file] = e
	switch {
	case e.skill == nil && (old == nil || old.reason != e.reason):
		d.log.Warn("skill skipped", "file", file, "reason", e.reason)
	case e.skill != nil && (old == nil || old.skill == nil):
		d.log.Debug("skill loaded", "file", file, "skill", name)
		for _, w := range e.skill.Warnings {
			d.log.Warn("skill loaded with a warning", "file", file, "warning", w)
		}
	}
}

// unknownSkill is the error for a name the Dir does not have.
func (d *Dir) unknownSkill(name string) error {
	var names []string
	for _, e := range d.entries {
		if d.activeLocked(e) {
			names = append(names, e.name)
		}
	}
	sort.Strings(names)
	return toolerr.New(toolerr.UnknownSkill, "Use one of the listed skills.", "no skill %q in provider %q", name, d.info.ID).
		With("skills", names)
}

// RescanEvery bounds how stale a listing of skills may be: a provider with
// skills is fresh (provider.Fresher) for this long after its skills were
// listed, so the call path re-lists it (a stat per skill file) at most once
// per interval instead of on every call. Running a skill always re-reads
// its file if it changed (Skill), so edit, save, run is unaffected; only a
// changed description or a new file reaches help and search up to this
// late (or at once through a rescan, as an unknown name asks for).
const RescanEvery = time.Second

// now is the clock of fresh (tests move it).
var now = time.Now

// fresh reports that the last Skills listing is younger than RescanEvery.
// No I/O: it is on every call's path.
func (d *Dir) fresh() bool {
	t := d.listed.Load()
	return t != 0 && now().Sub(time.Unix(0, t)) < RescanEvery
}

// Wrapped is a provider with the skills of a directory. It forwards the
// wrapped provider's tools, Diagnoser, Starter and Closer, and merges its
// skills when it has its own (the wrapped provider's win on a name clash).
type Wrapped struct {
	inner provider.Provider
	dir   *Dir
}

var (
	_ provider.Provider  = (*Wrapped)(nil)
	_ provider.Skiller   = (*Wrapped)(nil)
	_ provider.Diagnoser = (*Wrapped)(nil)
	_ provider.Starter   = (*Wrapped)(nil)
	_ provider.Closer    = (*Wrapped)(nil)
	_ provider.Fresher   = (*Wrapped)(nil)

	_ provider.ValuesCaller = (*Wrapped)(nil)
)

// Wrap returns p with the skills of dir; dir == "" returns p itself. It
// does no I/O: the directory is read when skills are first listed.
func Wrap(p provider.Provider, dir string, o Options) provider.Provider {
	if dir == "" || p == nil {
		return p
	}
	if o.OwnTools == nil {
		o.OwnTools = p.Tools
	}
	return &Wrapped{inner: p, dir: NewDir(p.Info(), dir, o)}
}

// Unwrap returns the wrapped provider.
func (w *Wrapped) Unwrap() provider.Provider { return w.inner }

// Dir returns the skills directory.
func (w *Wrapped) Dir() *Dir { return w.dir }

func (w *Wrapped) Info() catalog.ProviderInfo { return w.inner.Info() }

func (w *Wrapped) Tools(ctx context.Context) ([]catalog.Tool, error) { return w.inner.Tools(ctx) }

func (w *Wrapped) Call(ctx context.Context, t catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	return w.inner.Call(ctx, t, args)
}

// CallValues passes a call's values on to the wrapped provider.
func (w *Wrapped) CallValues(ctx context.Context, t catalog.Tool, args json.RawMessage, v provider.Values) (*provider.Result, error) {
	return provider.CallWith(ctx, w.inner, t, args, v)
}

// Skills lists the wrapped provider's skills, then the directory's.
func (w *Wrapped) Skills(ctx context.Context) ([]catalog.Skill, error) {
	own, err := w.dir.Skills(ctx)
	if err != nil {
		return nil, err
	}
	sk, ok := w.inner.(provider.Skiller)
	if !ok {
		return own, nil
	}
	theirs, err := sk.Skills(ctx)
	if err != nil {
		return nil, err
	}
	taken := make(map[string]bool, len(theirs))
	for _, s := range theirs {
		taken[s.Name] = true
	}
	out := append([]catalog.Skill(nil), theirs...)
	for _, s := range own {
		if taken[s.Name] {
			w.dir.log.Warn("skill skipped: the provider has its own skill of that name", "skill", s.Name)
			continue
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RunSkill runs the wrapped provider's skill of that name if it has one,
// else the directory's.
func (w *Wrapped) RunSkill(ctx context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error) {
	if sk, ok := w.inner.(provider.Skiller); ok {
		theirs, err := sk.Skills(ctx)
		if err == nil {
			for _, s := range theirs {
				if s.Name == name {
					return sk.RunSkill(ctx, name, args, tools)
				}
			}
		}
	}
	return w.dir.RunSkill(ctx, name, args, tools)
}

// Fresh reports that Tools and Skills would return what they returned last:
// the wrapped provider says so (a provider that cannot say is never fresh)
// and the skills were listed less than RescanEvery ago. Without it every
// call through a provider with skills re-listed the whole catalog under the
// registry's refresh lock.
func (w *Wrapped) Fresh() bool {
	f, ok := w.inner.(provider.Fresher)
	return ok && f.Fresh() && w.dir.fresh()
}

// Diagnostics are the wrapped provider's, then the directory's.
func (w *Wrapped) Diagnostics() []provider.Diagnostic {
	var out []provider.Diagnostic
	if d, ok := w.inner.(provider.Diagnoser); ok {
		out = append(out, d.Diagnostics()...)
	}
	return append(out, w.dir.Diagnostics()...)
}

// Start starts the wrapped provider if it has a start phase.
func (w *Wrapped) Start(ctx context.Context) error {
	if s, ok := w.inner.(provider.Starter); ok {
		return s.Start(ctx)
	}
	return nil
}

// Close closes the wrapped provider if it holds resources.
func (w *Wrapped) Close() error {
	if c, ok := w.inner.(provider.Closer); ok {
		return c.Close()
	}
	return nil
}
