package openapi_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/openapi"
)

// TestExamples loads the three REST services configured in examples/:
// each file loads with config.Load, each provider builds, and a provider
// whose document is a local file loads its tools (a URL is never fetched
// here).
func TestExamples(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "ghp_example", "TASKS_API_KEY": "key-example", "PB_USER": "u@example.com", "PB_PASS": "pass-example"}
	tests := []struct {
		file  string
		id    string
		tools []string
	}{
		{"github.yaml", "github", nil},
		{"tasks.yaml", "tasks", []string{"list", "create", "get", "update", "delete"}}, // document order
		{"pocketbase.yaml", "pocketbase", []string{"tasks/list", "tasks/create", "tasks/get", "tasks/update", "tasks/delete"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := config.Load(filepath.Join("..", "..", "..", "examples", tt.file), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			if err != nil {
				t.Fatal(err)
			}
			pc, ok := c.Provider(tt.id)
			if !ok || pc.Kind != "openapi" {
				t.Fatalf("no openapi provider %q", tt.id)
			}
			p, err := openapi.Build(provider.HeaderOf(*pc), pc.Spec, provider.Deps{CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(pc.Spec.(*openapi.Spec).Spec, "://") {
				return
			}
			tools, err := p.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if strings.Join(names, " ") != strings.Join(tt.tools, " ") {
				t.Errorf("tools = %v, want %v", names, tt.tools)
			}
		})
	}
}
