package static_test

import (
	"context"
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
