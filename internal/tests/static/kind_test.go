package static_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/kinds"
	"github.com/agent-tools/agent-tools/internal/tests/configtest"
	"github.com/agent-tools/agent-tools/internal/tests/static"
)

// The example kind registered as its line in the list of kinds would.
func init() { provider.RegisterKind(static.Kind) }

// TestStaticKind: one package and one registration make a kind the config
// decodes (with positions and suggestions), validates and builds.
func TestStaticKind(t *testing.T) {
	if got, want := config.KindNames(), append(slices.Clone(kindNames()), "static"); !slices.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	c, err := configtest.Parse(t, "providers:\n  - id: hello\n    kind: static\n    text: Hello.\n")
	if err != nil {
		t.Fatal(err)
	}
	p, err := provider.Build(c.Providers[0], provider.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := p.Tools(context.Background())
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %v, %v", tools, err)
	}
	if r, err := p.Call(context.Background(), tools[0], nil); err != nil || r.Text != "Hello." {
		t.Errorf("call = %+v, %v", r, err)
	}
	for _, tt := range []struct{ src, want string }{
		{"providers:\n  - id: hello\n    kind: static\n", `agent-tools.yaml:2:5: providers[0]: kind static needs "text" (what the tool answers)`},
		{"providers:\n  - id: hello\n    kind: static\n    txt: Hello.\n", `agent-tools.yaml:2:5: providers[0]: kind static needs "text" (what the tool answers)
agent-tools.yaml:4:5: providers[0]: unknown key "txt"; did you mean "text"?`},
		{"providers:\n  - id: hello\n    kind: static\n    text: [Hello]\n", `agent-tools.yaml:4:11: providers[0].text: want a string, got a list`},
		{"providers:\n  - id: hello\n    kind: static\n    text: Hi.\n    command: x\n", `agent-tools.yaml:5:5: providers[0].command: "command" does not apply to kind static`},
	} {
		_, err := configtest.Parse(t, tt.src)
		if got := strings.Join(configtest.ErrorsOf(t, err), "\n"); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.src, got, tt.want)
		}
	}
}

func kindNames() []string {
	var out []string
	for _, k := range kinds.All {
		if k.Section == "" { // the runtime's own are configured by their sections
			out = append(out, k.Name)
		}
	}
	return out
}

// TestContributingDiffApplies: CONTRIBUTING.md's diff, the whole change for
// a new kind, applies to this tree (git apply --check), and the kind it
// adds is this package's code.
func TestContributingDiffApplies(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: cannot check that CONTRIBUTING.md's diff applies")
	}
	root, _ := filepath.Abs(filepath.Join("..", "..", ".."))
	b, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "```diff\n")
	if i < 0 {
		t.Fatal("CONTRIBUTING.md has no diff")
	}
	d := doc[i+len("```diff\n"):]
	d = d[:strings.Index(d, "```")]
	patch := filepath.Join(t.TempDir(), "kind.diff")
	if err := os.WriteFile(patch, []byte(d), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(git, "-C", root, "apply", "--check", patch).CombinedOutput(); err != nil {
		t.Errorf("CONTRIBUTING.md's diff does not apply: %v\n%s", err, out)
	}
	code, err := os.ReadFile("kind.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(code), "\npackage static\n")
	var added strings.Builder
	for _, l := range strings.Split(d[strings.Index(d, "+++ b/internal/provider/static/kind.go"):], "\n")[2:] {
		if rest, ok := strings.CutPrefix(l, "+"); ok {
			added.WriteString(rest + "\n")
		}
	}
	if _, want, _ := strings.Cut(added.String(), "\npackage static\n"); want != body {
		t.Errorf("the kind in CONTRIBUTING.md's diff is not internal/tests/static/kind.go's code")
	}
}
