// Package layers holds one test: the module's packages form layers, and no
// package imports one from a layer above its own, nor one a rule (rules
// below) keeps it from within the layers. The order and the rules are data;
// `go list` gives the imports (production code only: tests may import
// anything).
package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/agent-tools/agent-tools"

// layers lists the module's packages bottom up (paths relative to the
// module; "." is the module's root package, "x/..." is x and everything
// under it). A package may import packages of its own layer and of the
// layers below. Packages outside internal/ other than the root (commands,
// benchmarks, examples, interop) form an implicit top layer; a new package
// under internal/ must be placed here, or the test fails and says so.
var layers = []layer{
	{"leaves", []string{
		"internal/catalog", "internal/index/cjk", "internal/index/cjk/gen",
		"internal/jsonrpcwire", "internal/jsonscan", "internal/naming",
		"internal/prompts", "internal/redact", "internal/state",
		"internal/text", "internal/tokens", "internal/toolerr",
	}},
	// Libraries that know nothing of providers or the runtime: the process
	// runner is one (it shapes a run into its own Outcome, not a provider
	// result).
	{"libraries", []string{
		"internal/cluster", "internal/embedding", "internal/embedding/localmodel/...", "internal/index",
		"internal/jsrun", "internal/mcpregistry", "internal/policy", "internal/proc", "internal/scan", "internal/secrets",
		"internal/upstreamauth",
	}},
	{"config", []string{"internal/config"}},
	// The provider contract, and code mode's (the facade's and the
	// built-in's meeting point, shared with JavaScript skills).
	{"provider", []string{"internal/provider", "internal/provider/codemode", "internal/status"}},
	// The kinds, and what wraps them; none of them knows the runtime's
	// services (registry, pipeline, passthrough) above.
	{"kinds", []string{
		"internal/provider/builtin", "internal/provider/cli",
		"internal/provider/cli/argv", "internal/provider/local",
		"internal/provider/mcp", "internal/provider/native",
		"internal/provider/openapi", "internal/provider/workers",
		"internal/skills",
	}},
	// The one list of kinds: the only package that names them all.
	{"kind list", []string{"internal/provider/kinds"}},
	{"services", []string{
		"internal/decisions", "internal/facade", "internal/metrics",
		"internal/passthrough", "internal/pins", "internal/pipeline",
		"internal/plugin", "internal/quota", "internal/registry", "internal/resultcache", "internal/resultguard", "internal/tracing",
	}},
	// The fronts the app wires: they define what they need of it.
	{"fronts", []string{"internal/console", "internal/transport"}},
	{"app", []string{"internal/app"}},
	{"runtime", []string{"internal/runtime"}},
	{"embedding API", []string{"."}},
	{"commands", []string{"internal/cli"}},
	// Test-only packages: nothing in production code may import them.
	{"test helpers", []string{"internal/tests/..."}},
}

// rules are what the layers allow but the architecture does not: a
// package matching from imports no package of the named layers, other than
// those matching except (patterns as in layers).
var rules = []rule{
	// A kind builds on the provider contract and the libraries below it; a
	// package beside the kinds (skills, which wraps any of them) is above
	// every kind in the architecture even though it shares their layer.
	{from: "internal/provider/...", layers: []string{"kinds"}, except: "internal/provider/...",
		why: "nothing under internal/provider/ imports upward"},
	// The facade serves whatever the registry holds: it names no kind, so
	// that adding a kind is one package and one line of the kind list.
	{from: "internal/facade", layers: []string{"kinds", "kind list"},
		why: "the facade imports no concrete kind"},
}

// exceptions are known violations being removed, as "from -> to": the test
// fails when one is no longer seen, so the line goes with the import.
var exceptions = []string{}

type layer struct {
	name string
	pkgs []string
}

// rule forbids imports within the layers; see rules.
type rule struct {
	from   string   // the importing packages (a pattern)
	layers []string // layer names it imports no package of...
	except string   // ...other than these ("": none)
	why    string
}

// pkg is what `go list -json` says of a package that the check reads.
type pkg struct {
	ImportPath string
	Imports    []string
}

func TestNoPackageImportsALayerAbove(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: cannot list the packages' imports")
	}
	goos := []string{runtime.GOOS}
	if runtime.GOOS != "windows" {
		goos = append(goos, "windows") // build-tagged files import differently
	}
	seen := map[string]bool{}
	for _, g := range goos {
		pkgs := goList(t, g)
		if len(pkgs) < 20 {
			t.Fatalf("GOOS=%s: go list found %d packages; is the test running inside the module?", g, len(pkgs))
		}
		for _, p := range violations(pkgs, layers, rules, exceptions, seen) {
			t.Errorf("GOOS=%s: %s", g, p)
		}
	}
	for _, e := range exceptions {
		if !seen[e] {
			t.Errorf("exception %q is no longer needed: remove it from the list", e)
		}
	}
}

// goList lists the module's packages with their imports for one GOOS.
func goList(t *testing.T, goos string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports", module+"/...")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// matches reports whether the package rel (relative to the module) matches
// pattern: the same path, or "x/..." for x and everything under it.
func matches(pattern, rel string) bool {
	return pattern == rel || (strings.HasSuffix(pattern, "/...") &&
		(rel == strings.TrimSuffix(pattern, "/...") || strings.HasPrefix(rel, strings.TrimSuffix(pattern, "..."))))
}

// violations returns, sorted, every import of a module package from a layer
// above its own, every import a rule forbids, and every internal package
// with no layer. Exceptions are recorded in seen instead of reported.
func violations(pkgs []pkg, ls []layer, rs []rule, except []string, seen map[string]bool) []string {
	rank := func(path string) (int, bool) {
		rel, ok := strings.CutPrefix(path, module)
		if !ok {
			return 0, false // not ours
		}
		rel = strings.TrimPrefix(rel, "/")
		if rel == "" {
			rel = "."
		}
		for i, l := range ls {
			for _, p := range l.pkgs {
				if matches(p, rel) {
					return i, true
				}
			}
		}
		if strings.HasPrefix(rel, "internal/") {
			return -1, true // unplaced
		}
		return len(ls), true // commands, benchmarks, examples: on top
	}
	name := func(i int) string {
		if i == len(ls) {
			return "programs"
		}
		return ls[i].name
	}
	short := func(path string) string {
		if path == module {
			return "."
		}
		return strings.TrimPrefix(path, module+"/")
	}
	var out []string
	for _, p := range pkgs {
		from, ours := rank(p.ImportPath)
		if !ours {
			continue
		}
		if from < 0 {
			out = append(out, fmt.Sprintf("%s has no layer: add it to the layers list", short(p.ImportPath)))
			continue
		}
		for _, imp := range p.Imports {
			to, ours := rank(imp)
			if !ours || to < 0 {
				continue
			}
			var problem string
			if to > from {
				problem = fmt.Sprintf("%s imports %s, a layer above (%s above %s)",
					short(p.ImportPath), short(imp), name(to), name(from))
			} else if r, broken := breaks(rs, short(p.ImportPath), short(imp), name(to)); broken {
				problem = fmt.Sprintf("%s imports %s (%s): %s", short(p.ImportPath), short(imp), name(to), r.why)
			} else {
				continue
			}
			edge := short(p.ImportPath) + " -> " + short(imp)
			if slices.Contains(except, edge) {
				seen[edge] = true
				continue
			}
			out = append(out, problem)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// breaks returns the first rule the import from -> to (of layer toLayer)
// breaks.
func breaks(rs []rule, from, to, toLayer string) (rule, bool) {
	for _, r := range rs {
		if matches(r.from, from) && slices.Contains(r.layers, toLayer) && (r.except == "" || !matches(r.except, to)) {
			return r, true
		}
	}
	return rule{}, false
}

// TestViolations checks the checker on small graphs: an import upward is
// reported with both ends, downward and sideways ones are not unless a rule
// forbids them, an internal package without a layer is reported,
// exceptions are recorded instead.
func TestViolations(t *testing.T) {
	ls := []layer{
		{"low", []string{"internal/a", "internal/b"}},
		{"mid", []string{"internal/m/...", "internal/w"}},
		{"high", []string{"internal/h", "."}},
	}
	rs := []rule{
		{from: "internal/m/...", layers: []string{"mid"}, except: "internal/m/...", why: "m imports nothing beside it"},
		{from: "internal/h", layers: []string{"mid"}, except: "internal/m/...", why: "h names only m of mid"},
	}
	m := func(rel string) string {
		if rel == "." {
			return module
		}
		return module + "/" + rel
	}
	tests := []struct {
		name   string
		pkgs   []pkg
		except []string
		want   []string
		seen   []string
	}{
		{"down and sideways", []pkg{
			{m("internal/h"), []string{m("internal/a"), m("internal/m/x"), "fmt"}},
			{m("internal/a"), []string{m("internal/b")}},
			{m("cmd/x"), []string{m("."), m("internal/h")}},
		}, nil, nil, nil},
		{"up", []pkg{
			{m("internal/a"), []string{m("internal/m")}},
			{m("internal/m/deep"), []string{m(".")}},
		}, nil, []string{
			"internal/a imports internal/m, a layer above (mid above low)",
			"internal/m/deep imports ., a layer above (high above mid)",
		}, nil},
		{"into a program", []pkg{
			{m("internal/h"), []string{m("cmd/x")}},
		}, nil, []string{"internal/h imports cmd/x, a layer above (programs above high)"}, nil},
		{"unplaced", []pkg{
			{m("internal/new"), nil},
		}, nil, []string{"internal/new has no layer: add it to the layers list"}, nil},
		{"prefix is not a subtree", []pkg{
			{m("internal/mm"), nil},
		}, nil, []string{"internal/mm has no layer: add it to the layers list"}, nil},
		{"exception", []pkg{
			{m("internal/a"), []string{m("internal/h"), m("internal/m")}},
		}, []string{"internal/a -> internal/h"}, []string{
			"internal/a imports internal/m, a layer above (mid above low)",
		}, []string{"internal/a -> internal/h"}},
		{"rules", []pkg{
			{m("internal/m/x"), []string{m("internal/w"), m("internal/m/y"), m("internal/m"), m("internal/a")}},
			{m("internal/w"), []string{m("internal/m/x")}},
			{m("internal/h"), []string{m("internal/a"), m("internal/m/x"), m("internal/w")}},
			{m("."), []string{m("internal/w")}},
		}, nil, []string{
			"internal/h imports internal/w (mid): h names only m of mid",
			"internal/m/x imports internal/w (mid): m imports nothing beside it",
		}, nil},
		{"rule exception", []pkg{
			{m("internal/h"), []string{m("internal/w")}},
		}, []string{"internal/h -> internal/w"}, nil, []string{"internal/h -> internal/w"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]bool{}
			got := violations(tt.pkgs, ls, rs, tt.except, seen)
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n got %q\nwant %q", got, tt.want)
			}
			for _, e := range tt.seen {
				if !seen[e] {
					t.Errorf("exception %q not recorded", e)
				}
			}
			if len(seen) != len(tt.seen) {
				t.Errorf("seen = %v, want %v", seen, tt.seen)
			}
		})
	}
}
