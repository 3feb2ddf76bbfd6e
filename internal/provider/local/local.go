// Package local is the "local" provider: executable scripts in the project's
// .agents/tools directory (docs/providers/local.md; Octomind-compatible).
//
// A script's leading comment block is its whole interface (see [Header]). A
// call stats only its own script (re-parsed when its identity changed), so
// edit, save, call works without a restart; the directory is re-read by Tools
// (one stat per file) only when a watcher saw a change in it, or at most once
// per RescanEvery where it cannot be watched (see [Provider.Fresh]).
//
// Confirmation: @readonly tools are catalog.Tool.ReadOnly; @confirm tools are
// catalog.Tool.AlwaysConfirm, so the policy asks for confirmation even when
// the provider is configured with requireConfirm: false.
package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// ID is the provider id and kind.
const ID = "local"

// Defaults.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultDescription = "Scripts of this repository (.agents/tools)"
)

const (
	maxHeaderBytes = 64 << 10 // the header is read from this many leading bytes
	// racyWindow: a file modified this recently is re-parsed on every scan, so
	// that two edits within one mtime tick (same size, same inode) are seen.
	racyWindow = 2 * time.Second
)

var (
	_ provider.Provider  = (*Provider)(nil)
	_ provider.Diagnoser = (*Provider)(nil)
)

// Options configure a Provider.
type Options struct {
	// Dir is the absolute scripts directory (usually <project>/.agents/tools).
	Dir string
	// ProjectDir is the scripts' working directory and AGENT_TOOLS_WORKDIR
	// ("" = the working directory of this process).
	ProjectDir string
	// RequireConfirm is reported by Info; @readonly and @confirm refine it per tool.
	RequireConfirm bool
	// Timeout is the default per-call deadline (0 = DefaultTimeout); @timeout overrides it.
	Timeout time.Duration
	// MaxOutput bounds each of stdout and stderr (0 = proc.DefaultMaxOutput).
	MaxOutput int
	// Description is the provider's one-line description ("" = DefaultDescription).
	Description string
	// Logger receives skip reasons, once per change (nil = slog.Default()).
	Logger *slog.Logger
	// Environ is the environment scripts inherit (nil = os.Environ).
	Environ func() []string
}

// Provider serves the scripts of one directory. It is safe for concurrent use.
type Provider struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	entries map[string]*entry // by file name
	dirErr  string            // last directory-level state, to log changes once
	absent  bool
	fresh   freshness // see fresh.go
}

// entry is the cached view of one file, valid while its key is unchanged.
type entry struct {
	name   string
	path   string
	key    fileKey
	racy   bool
	header *Header // nil when skipped
	tool   catalog.Tool
	reason string // why the file is skipped ("" = it is a tool)
}

// New returns a provider for opts.Dir. It does no I/O beyond resolving
// relative paths.
func New(opts Options) *Provider {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Description == "" {
		opts.Description = DefaultDescription
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.Dir != "" && !filepath.IsAbs(opts.Dir) {
		if abs, err := filepath.Abs(opts.Dir); err == nil {
			opts.Dir = abs
		}
	}
	if opts.ProjectDir == "" {
		opts.ProjectDir, _ = os.Getwd()
	} else if !filepath.IsAbs(opts.ProjectDir) {
		if abs, err := filepath.Abs(opts.ProjectDir); err == nil {
			opts.ProjectDir = abs
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Provider{
		opts:    opts,
		log:     log.With("provider", ID, "dir", opts.Dir),
		entries: map[string]*entry{},
	}
}

// Info describes the provider.
func (p *Provider) Info() catalog.ProviderInfo {
	return catalog.ProviderInfo{
		ID:             ID,
		Kind:           ID,
		Description:    p.opts.Description,
		RequireConfirm: p.opts.RequireConfirm,
		Timeout:        p.opts.Timeout,
		HostLocal:      true,
	}
}

// Tools lists the valid scripts, sorted by name. A missing directory is zero
// tools, not an error.
func (p *Provider) Tools(ctx context.Context) ([]catalog.Tool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.beginScan()
	if err := p.refreshLocked(); err != nil {
		return nil, err
	}
	tools := make([]catalog.Tool, 0, len(p.entries))
	for _, e := range p.entries {
		if e.header != nil {
			tools = append(tools, e.tool)
		}
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools, nil
}

// Diagnostics rescans the directory and reports every candidate file: "ok" for
// tools, "skipped" with the reason for the rest.
func (p *Provider) Diagnostics() []provider.Diagnostic {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refreshLocked(); err != nil {
		return []provider.Diagnostic{{Provider: ID, Item: p.opts.Dir, Status: "failed", Reason: err.Error()}}
	}
	if p.absent {
		return []provider.Diagnostic{{Provider: ID, Item: p.opts.Dir, Status: "ok", Reason: "directory absent: no local tools"}}
	}
	out := make([]provider.Diagnostic, 0, len(p.entries))
	for _, e := range p.entries {
		d := provider.Diagnostic{Provider: ID, Item: e.name, Status: "ok"}
		if e.header == nil {
			d.Status, d.Reason = "skipped", e.reason
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Item < out[j].Item })
	if len(out) == 0 {
		out = append(out, provider.Diagnostic{Provider: ID, Item: p.opts.Dir, Status: "ok", Reason: "no scripts"})
	}
	return out
}

// ignored reports names that are never candidates and never reported: hidden
// files, editor backups and autosaves.
func ignored(name string) bool {
	return name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") ||
		(len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"))
}

// refreshLocked re-reads the directory and updates the cache. p.mu is held.
func (p *Provider) refreshLocked() error {
	des, err := os.ReadDir(p.opts.Dir)
	links := false
	defer func() { p.endScan(err == nil || errors.Is(err, fs.ErrNotExist), links) }()
	if err != nil {
		clear(p.entries)
		if errors.Is(err, fs.ErrNotExist) {
			if !p.absent {
				p.log.Debug("scripts directory absent: no local tools")
			}
			p.absent, p.dirErr = true, ""
			return nil
		}
		p.absent = false
		if msg := err.Error(); msg != p.dirErr {
			p.dirErr = msg
			p.log.Warn("cannot read scripts directory", "err", err)
		}
		return fmt.Errorf("local: read %s: %w", p.opts.Dir, err)
	}
	p.absent, p.dirErr = false, ""
	seen := make(map[string]bool, len(des))
	for _, de := range des {
		name := de.Name()
		if ignored(name) {
			continue
		}
		seen[name] = true
		links = links || de.Type()&fs.ModeSymlink != 0
		p.refreshEntryLocked(name)
	}
	for name := range p.entries {
		if !seen[name] {
			p.log.Debug("local tool removed", "file", name)
			delete(p.entries, name)
		}
	}
	return nil
}

// refreshEntryLocked re-stats one file and re-parses it if it changed. It
// returns nil when the file does not exist. p.mu is held.
func (p *Provider) refreshEntryLocked(name string) *entry {
	path := filepath.Join(p.opts.Dir, name)
	old := p.entries[name]
	fi, err := os.Stat(path) // follows symlinks: a shared script may be linked in
	var e *entry
	switch {
	case err == nil:
		k := keyOf(fi)
		if old != nil && old.key == k && !old.racy {
			return old
		}
		e = p.load(name, path, fi, k)
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr != nil {
			if old != nil {
				delete(p.entries, name)
			}
			return nil
		}
		e = &entry{name: name, path: path, reason: "broken symbolic link"}
	default:
		e = &entry{name: name, path: path, reason: "cannot stat: " + err.Error()}
	}
	p.entries[name] = e
	switch {
	case e.header == nil && (old == nil || old.reason != e.reason):
		p.log.Warn("local tool skipped", "file", name, "reason", e.reason)
	case e.header != nil && old != nil && old.header == nil:
		p.log.Info("local tool loaded", "file", name)
	case e.header != nil && old == nil:
		p.log.Debug("local tool loaded", "file", name)
	}
	return e
}

// load classifies and parses one file.
func (p *Provider) load(name, path string, fi fs.FileInfo, k fileKey) *entry {
	e := &entry{name: name, path: path, key: k}
	mt := fi.ModTime()
	e.racy = time.Since(mt) < racyWindow || mt.After(time.Now())
	switch {
	case fi.IsDir():
		e.reason = "is a directory"
	case !fi.Mode().IsRegular():
		e.reason = "not a regular file"
	case strings.Contains(name, "."):
		e.reason = "file name has a dot: rename to " + dotless(name)
	case fi.Mode().Perm()&0o111 == 0:
		e.reason = "not executable: chmod +x " + p.display(path)
	}
	if e.reason != "" {
		return e
	}
	src, err := readHead(path)
	if err != nil {
		e.reason = "cannot read: " + err.Error()
		return e
	}
	h, err := ParseHeader(src)
	if err != nil {
		e.reason = err.Error()
		return e
	}
	e.header = h
	e.tool = catalog.Tool{
		Provider:      ID,
		Name:          name,
		Description:   h.Description,
		InputSchema:   h.Schema(),
		ReadOnly:      h.ReadOnly,
		AlwaysConfirm: h.Confirm,
		Timeout:       h.Timeout,
	}
	return e
}

// dotless suggests a name without the extension: deploy.sh -> deploy.
func dotless(name string) string {
	base := strings.TrimSuffix(name, filepath.Ext(name))
	base = strings.ReplaceAll(base, ".", "_")
	if base == "" {
		return strings.ReplaceAll(strings.TrimPrefix(name, "."), ".", "_")
	}
	return base
}

// readHead reads the first maxHeaderBytes of a file, cut at the last newline
// when the file is longer.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, maxHeaderBytes)
	n, err := io.ReadFull(f, buf)
	switch {
	case err == nil: // possibly longer: drop a partial last line
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			n = i + 1
		}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
	default:
		return nil, err
	}
	return buf[:n], nil
}

// display shows a path relative to the project when it is inside it.
func (p *Provider) display(path string) string {
	if rel, err := filepath.Rel(p.opts.ProjectDir, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}

// resolve re-stats one script by tool name at call time. It returns nil for
// names that cannot be a script of this directory.
func (p *Provider) resolve(name string) *entry {
	if ignored(name) || strings.ContainsAny(name, "/\\\x00") || name == ".." {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.entries[name]
	e := p.refreshEntryLocked(name)
	if e != old {
		p.markStale() // the script changed: the catalog re-reads its header on the next refresh
	}
	return e
}

// Call runs a script: no shell, working directory ProjectDir, the arguments
// object on stdin then EOF and as AGENT_TOOLS_PARAM_<NAME> / OCTOMIND_PARAM_<NAME>
// variables on top of the inherited environment.
func (p *Provider) Call(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	name := tool.Name
	e := p.resolve(name)
	if e == nil {
		return nil, toolerr.New(toolerr.UnknownTool,
			"The script is no longer in "+p.display(p.opts.Dir)+"; list the tools again.",
			"local tool %q does not exist", name)
	}
	if e.header == nil {
		return nil, toolerr.New(toolerr.BackendError,
			"Fix the script's header (or file name/permissions); it is re-read on the next call.",
			"local tool %q is currently unavailable: %s", name, e.reason)
	}
	h := e.header

	stdin := bytes.TrimSpace(args)
	if len(stdin) == 0 || string(stdin) == "null" {
		stdin = []byte("{}")
	}
	env, err := p.environ(name, stdin)
	if err != nil {
		return nil, err
	}

	timeout := h.Timeout
	if timeout <= 0 {
		timeout = p.opts.Timeout
	}
	res, err := proc.Run(ctx, proc.Spec{
		Path:      e.path,
		Dir:       p.opts.ProjectDir,
		Env:       env,
		Stdin:     stdin,
		Timeout:   timeout,
		MaxOutput: p.opts.MaxOutput,
	})
	if err != nil {
		cause := err.Error()
		var errno syscall.Errno
		if errors.As(err, &errno) {
			cause = errno.Error() // the path is already in the message
		}
		return nil, toolerr.New(toolerr.BackendError, startHint(err, h),
			"cannot run local tool %q (%s): %s", name, p.display(e.path), cause)
	}

	out, err := proc.Shape(ctx, res, proc.Subject{
		What:    fmt.Sprintf("local tool %q", name),
		Timeout: timeout,
		TimeoutHint: fmt.Sprintf("The script and its child processes were killed after %s. If it legitimately needs longer, add a header line such as \"# @timeout %s\" to %s.",
			proc.FormatDuration(timeout), proc.FormatDuration(suggestTimeout(timeout)), p.display(e.path)),
	})
	if err != nil {
		return nil, err
	}
	return &provider.Result{Text: out.Text, IsError: out.IsError, Details: out.Details}, nil
}

// reservedEnv are variables the runtime sets per call: inherited values are
// dropped so that a runtime started from inside a tool cannot leak its own
// call's arguments into an omitted parameter.
var reservedEnv = map[string]bool{
	"AGENT_TOOLS_WORKDIR": true, "OCTOMIND_WORKDIR": true,
	"AGENT_TOOLS_TOOL_NAME": true, "OCTOMIND_TOOL_NAME": true,
	"PWD": true, // os/exec keeps an inherited PWD when Env is explicit
}

// environ builds the script's environment from the runtime's environment and
// the arguments object.
func (p *Provider) environ(name string, args []byte) ([]string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return nil, toolerr.New(toolerr.InvalidArguments, `Pass the arguments as a JSON object, e.g. {"name": "value"}.`,
			"arguments of local tool %q must be a JSON object", name)
	}
	base := p.opts.Environ()
	env := make([]string, 0, len(base)+5+2*len(obj))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if reservedEnv[k] || strings.HasPrefix(k, "AGENT_TOOLS_PARAM_") || strings.HasPrefix(k, "OCTOMIND_PARAM_") {
			continue
		}
		env = append(env, kv)
	}
	wd := p.opts.ProjectDir
	env = append(env, "PWD="+wd, "AGENT_TOOLS_WORKDIR="+wd, "OCTOMIND_WORKDIR="+wd,
		"AGENT_TOOLS_TOOL_NAME="+name, "OCTOMIND_TOOL_NAME="+name)

	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	upper := make(map[string]string, len(keys))
	for _, k := range keys {
		if !validName(k) {
			return nil, toolerr.New(toolerr.InvalidArguments, "Use only the parameters in the tool's input schema.",
				"argument name %q of local tool %q is not a valid parameter name", k, name)
		}
		uk := strings.ToUpper(k)
		if prev, dup := upper[uk]; dup {
			return nil, toolerr.New(toolerr.InvalidArguments, "Use only the parameters in the tool's input schema.",
				"arguments %q and %q of local tool %q differ only in case", prev, k, name)
		}
		upper[uk] = k
		v, ok, err := envValue(obj[k])
		if err != nil {
			return nil, toolerr.New(toolerr.InvalidArguments, "Environment variables cannot hold NUL characters; remove them.",
				"argument %q of local tool %q: %v", k, name, err)
		}
		if !ok {
			continue // null: omitted
		}
		env = append(env, "AGENT_TOOLS_PARAM_"+uk+"="+v, "OCTOMIND_PARAM_"+uk+"="+v)
	}
	return env, nil
}

// envValue renders one argument for the environment: strings raw, booleans
// and numbers as their JSON text, arrays and objects as compact JSON; null is
// omitted (ok = false).
func envValue(raw json.RawMessage) (string, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	var v string
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", false, err
		}
	case '[', '{':
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return "", false, err
		}
		v = b.String()
	default:
		v = string(raw)
	}
	if strings.IndexByte(v, 0) >= 0 {
		return "", false, errors.New("contains a NUL character")
	}
	return v, true, nil
}

// startHint explains why a script could not be started.
func startHint(err error, h *Header) string {
	switch {
	case h.CRLF:
		return "The #! line ends with a carriage return (Windows line endings): convert the file to LF line endings."
	case errors.Is(err, syscall.ENOEXEC):
		return "The file is not a binary and has no #! line: make its first line e.g. #!/bin/sh or #!/usr/bin/env python3."
	case errors.Is(err, fs.ErrNotExist) && h.Interpreter != "":
		return fmt.Sprintf("The interpreter on the #! line (%s) was not found on this machine.", h.Interpreter)
	case errors.Is(err, fs.ErrPermission):
		return "The file (or its interpreter) is not executable by this user, or its file system is mounted noexec: chmod +x it."
	}
	return "Check that the script can be run directly from a terminal."
}

// suggestTimeout proposes a larger deadline than d.
func suggestTimeout(d time.Duration) time.Duration {
	switch {
	case d < time.Minute:
		return 2 * time.Minute
	case d < 5*time.Minute:
		return 10 * time.Minute
	}
	return 2 * d.Round(time.Minute)
}
