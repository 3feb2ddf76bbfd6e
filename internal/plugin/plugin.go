// Package plugin reads plugin directories (agent-tools-plugin-*/plugin.json,
// docs/providers/mcp.md):
// a directory named agent-tools-plugin-* holding a plugin.json such as
//
//	{
//	  "name": "n8n",
//	  "prefix": "n8n",
//	  "readonlyTools": ["search_workflows", "get_execution"],
//	  "discoverHint": "workflows, executions, data tables",
//	  "requireConfirm": false,
//	  "provider": {"kind": "mcp", "url": "http://127.0.0.1:5678/mcp",
//	               "headers": {"Authorization": "Bearer ${N8N_TOKEN}"}}
//	}
//
// The seed's JavaScript "adapter" is replaced by "provider", an entry of the
// config's providers: list (kind defaults to mcp; id, readonly, discoverHint,
// requireConfirm and description come from the manifest's own fields). It is
// checked and interpolated (${VAR}) exactly as agent-tools.yaml is, with
// relative paths (cwd, spec) and the working directory resolved against the
// plugin's directory. The seed's "skills" are JavaScript modules: they are
// accepted, reported and not run.
//
// Plugins are looked for next to the config, in $AGENT_TOOLS_PLUGINS_DIR (a
// path list) and in the project directory. A broken plugin is reported and
// skipped; it never stops the others.
package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/text"
)

// Conventions.
const (
	DirPrefix    = "agent-tools-plugin-"
	ManifestName = "plugin.json"
	EnvDirs      = "AGENT_TOOLS_PLUGINS_DIR"
	// MaxManifestBytes bounds plugin.json.
	MaxManifestBytes = 1 << 20
)

// Manifest is plugin.json as written.
type Manifest struct {
	Name           string          `json:"name"`
	Prefix         string          `json:"prefix,omitempty"`
	Description    string          `json:"description,omitempty"`
	ReadonlyTools  []string        `json:"readonlyTools,omitempty"`
	Skills         []string        `json:"skills,omitempty"`
	DiscoverHint   string          `json:"discoverHint,omitempty"`
	RequireConfirm *bool           `json:"requireConfirm,omitempty"`
	Provider       json.RawMessage `json:"provider,omitempty"`
	// Adapter and AdapterExport are the seed's JavaScript adapter: accepted
	// for compatibility, never run.
	Adapter       string `json:"adapter,omitempty"`
	AdapterExport string `json:"adapterExport,omitempty"`
}

// Plugin is a plugin ready to be built.
type Plugin struct {
	// Dir is the plugin's directory (absolute).
	Dir      string
	Manifest Manifest
	// Provider is the provider the plugin declares: Provider.ID is the prefix
	// (or the name), Provider.Enabled false means the plugin is switched off.
	Provider config.Provider
	// Warnings are problems that did not stop the plugin (unknown keys).
	Warnings []string
}

// fields of plugin.json, in the order they are checked.
var fields = []string{"name", "prefix", "description", "readonlyTools", "skills", "discoverHint", "requireConfirm", "provider", "adapter", "adapterExport"}

// Error is why a plugin was skipped.
type Error struct {
	Dir string
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("plugin %s: %v", e.Dir, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Load reads dir/plugin.json. A nil env means os.LookupEnv.
func Load(dir string, env func(string) (string, bool)) (*Plugin, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &Error{dir, err}
	}
	f, err := os.Open(filepath.Join(abs, ManifestName))
	if err != nil {
		return nil, &Error{abs, err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return nil, &Error{abs, err}
	}
	if len(data) > MaxManifestBytes {
		return nil, &Error{abs, fmt.Errorf("%s is larger than %d bytes", ManifestName, MaxManifestBytes)}
	}
	p, err := Parse(abs, data, env)
	if err != nil {
		return nil, &Error{abs, err}
	}
	return p, nil
}

// Parse checks a plugin.json found in dir (absolute). Every problem is
// reported at once, one per line, as "<key path>: <problem>".
func Parse(dir string, data []byte, env func(string) (string, bool)) (*Plugin, error) {
	if env == nil {
		env = os.LookupEnv
	}
	raw, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	pl := &Plugin{Dir: dir}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	var unknown []string
	for k := range raw {
		if !slices.Contains(fields, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		pl.Warnings = append(pl.Warnings, fmt.Sprintf("unknown key %q ignored", clip(k)))
	}
	m := &pl.Manifest
	get := func(key string, dst any, want string) {
		v, ok := raw[key]
		if !ok || string(v) == "null" {
			return
		}
		if err := strictUnmarshal(v, dst); err != nil {
			bad("%s: want %s", key, want)
		}
	}
	get("name", &m.Name, "a string")
	get("prefix", &m.Prefix, "a string")
	get("description", &m.Description, "a string")
	get("readonlyTools", &m.ReadonlyTools, "a list of tool names")
	get("skills", &m.Skills, "a list of strings")
	get("discoverHint", &m.DiscoverHint, "a string")
	get("requireConfirm", &m.RequireConfirm, "true or false")
	get("adapter", &m.Adapter, "a string")
	get("adapterExport", &m.AdapterExport, "a string")
	if v, ok := raw["provider"]; ok && string(v) != "null" {
		m.Provider = v
	}

	id := m.Prefix
	if id == "" {
		id = m.Name
	}
	switch {
	case m.Name == "" && m.Prefix == "":
		bad(`missing "name" (and "prefix"): one of them becomes the provider id`)
	case !validID(id):
		key := "prefix"
		if m.Prefix == "" {
			key = "name"
		}
		bad("%s: %q is not a valid provider id: use 1 to %d lowercase letters and digits (it becomes the tool-name prefix)", key, clip(id), config.MaxIDLen)
	}
	for i, t := range m.ReadonlyTools {
		if t == "" {
			bad("readonlyTools[%d]: empty tool name", i)
		}
	}
	var prov map[string]json.RawMessage
	switch {
	case m.Provider == nil && m.Adapter != "":
		bad(`adapter %q is a JavaScript module, which agent-tools does not run: describe the server in a "provider" object instead (e.g. {"kind": "mcp", "command": "node", "args": ["server.js"]})`, clip(m.Adapter))
	case m.Provider == nil:
		bad(`missing "provider": an object such as {"kind": "mcp", "command": "...", "args": [...]} or {"kind": "mcp", "url": "..."}`)
	default:
		prov, err = decodeObject(m.Provider)
		if err != nil {
			bad("provider: %v", err)
		}
		if m.Adapter != "" {
			pl.Warnings = append(pl.Warnings, fmt.Sprintf("adapter %q ignored: the provider object is used", clip(m.Adapter)))
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}

	// The manifest's own fields fill the provider entry.
	set := func(key, from string, v any) {
		if _, dup := prov[key]; dup {
			bad("provider.%s: also given as %q; keep one", key, from)
			return
		}
		b, _ := json.Marshal(v)
		prov[key] = b
	}
	if _, ok := prov["id"]; ok {
		bad(`provider.id: not allowed; the plugin's "prefix" (or "name") is the provider id`)
	}
	prov["id"], _ = json.Marshal(id)
	if _, ok := prov["kind"]; !ok {
		prov["kind"] = json.RawMessage(`"mcp"`)
	}
	if m.ReadonlyTools != nil {
		set("readonly", "readonlyTools", m.ReadonlyTools)
	}
	if m.DiscoverHint != "" {
		set("discoverHint", "discoverHint", m.DiscoverHint)
	}
	if m.RequireConfirm != nil {
		set("requireConfirm", "requireConfirm", *m.RequireConfirm)
	}
	if m.Description != "" {
		set("description", "description", m.Description)
	} else if _, ok := prov["description"]; !ok {
		prov["description"], _ = json.Marshal("Plugin " + firstNonEmpty(m.Name, id))
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	pc, err := provider(dir, prov, env)
	if err != nil {
		return nil, err
	}
	pc.SetDefaultCwd(dir) // a plugin's relative paths mean its own files
	pl.Provider = pc
	return pl, nil
}

// provider validates the entry with the config's own rules, as the only
// item of a providers: list, with paths relative to dir.
func provider(dir string, entry map[string]json.RawMessage, env func(string) (string, bool)) (config.Provider, error) {
	doc, err := json.Marshal(map[string]any{"providers": []any{entry}})
	if err != nil {
		return config.Provider{}, err
	}
	cfg, err := config.Parse(filepath.Join(dir, ManifestName), doc, env)
	for _, s := range cfg.Secrets() { // nil-safe; scrubbed from all output (internal/redact)
		redact.Add(s.Name, s.Value)
	}
	if err != nil {
		ce, ok := config.AsErrors(err)
		if !ok {
			return config.Provider{}, err
		}
		lines := make([]string, 0, len(ce.List))
		for _, e := range ce.List {
			// Positions point into the generated document: keep the key path only.
			path := strings.Replace(e.Path, "providers[0]", "provider", 1)
			if path == "" || !strings.HasPrefix(path, "provider") {
				path = "provider"
			}
			lines = append(lines, path+": "+e.Msg)
		}
		return config.Provider{}, errors.New(strings.Join(lines, "\n"))
	}
	if len(cfg.Providers) != 1 {
		return config.Provider{}, errors.New("provider: not a provider entry")
	}
	return cfg.Providers[0], nil
}

// decodeObject decodes one JSON object into its raw members.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("invalid JSON at line %d: %v", line(data, se.Offset), err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("want a JSON object, got %s", te.Value)
		}
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file: want a JSON object")
		}
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if m == nil {
		return nil, errors.New("want a JSON object, got null")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: data after the object")
	}
	return m, nil
}

func strictUnmarshal(data []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

func line(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}

func validID(id string) bool {
	if id == "" || len(id) > config.MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// clip shortens manifest text quoted in warnings and errors.
func clip(s string) string { return text.Clip(s, 80) }

// SearchDirs lists where plugins are looked for, in order and without
// repeats: the config's directory, each entry of $AGENT_TOOLS_PLUGINS_DIR,
// the project directory. A nil env means os.LookupEnv.
func SearchDirs(configDir, projectDir string, env func(string) (string, bool)) []string {
	if env == nil {
		env = os.LookupEnv
	}
	var out []string
	seen := map[string]bool{}
	add := func(d string) {
		if d == "" {
			return
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		key := d
		if real, err := filepath.EvalSymlinks(d); err == nil {
			key = real
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, d)
		}
	}
	add(configDir)
	if v, ok := env(EnvDirs); ok {
		for _, d := range filepath.SplitList(v) {
			add(d)
		}
	}
	add(projectDir)
	return out
}

// Discover loads the plugins found in dirs, in order (by name within a
// directory). A plugin directory reached twice (through a symlink, or two
// search directories) counts once; a second plugin with an id already taken
// is skipped. Broken plugins come back as errors (*Error), the rest load.
func Discover(dirs []string, env func(string) (string, bool)) ([]*Plugin, []error) {
	var (
		plugins []*Plugin
		errs    []error
	)
	seen := map[string]bool{}
	ids := map[string]string{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, &Error{d, fmt.Errorf("cannot list plugin directory: %w", err)})
			}
			continue
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), DirPrefix) {
				continue
			}
			pd := filepath.Join(d, e.Name())
			fi, err := os.Stat(pd) // follows symlinks
			if err != nil || !fi.IsDir() {
				continue
			}
			key := pd
			if real, err := filepath.EvalSymlinks(pd); err == nil {
				key = real
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			pl, err := Load(pd, env)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if first, dup := ids[pl.Provider.ID]; dup {
				errs = append(errs, &Error{pd, fmt.Errorf("provider id %q is already used by the plugin in %s", pl.Provider.ID, first)})
				continue
			}
			ids[pl.Provider.ID] = pd
			plugins = append(plugins, pl)
		}
	}
	return plugins, errs
}
