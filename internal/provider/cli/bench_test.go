//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/proc"
)

// BenchmarkCallVsDirect runs `true` through the provider (argument decoding,
// template expansion, working-directory check, proc.Run, shaping) and
// directly with proc.Run, alternating in one loop, and reports the ratio.
func BenchmarkCallVsDirect(b *testing.B) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Skip("true is not installed")
	}
	p := build(b, b.TempDir(), `providers:
  - id: b
    kind: cli
    allow: ["true"]
    tools:
      - name: t
        argv: ["true", "--x={x}", "--", "{files}"]
        params: { x: { default: y }, files: { type: array } }
        readonly: true
`)
	args := json.RawMessage(`{"x":"value","files":["a","b","c"]}`)
	ctx := context.Background()
	var viaProvider, direct time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := proc.Run(ctx, proc.Spec{Path: path, Args: []string{"--x=value", "--", "a", "b", "c"}, Env: p.env, Dir: p.root}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := p.Call(ctx, catalog.Tool{Name: "t"}, args); err != nil {
			b.Fatal(err)
		}
		direct += t1.Sub(t0)
		viaProvider += time.Since(t1)
	}
	b.ReportMetric(float64(viaProvider)/float64(direct), "provider/direct")
}

// BenchmarkExpand is the template expansion alone.
func BenchmarkExpand(b *testing.B) {
	p := build(b, b.TempDir(), shapes)
	t := p.byName["echo"]
	args := map[string]any{"a": "some value", "rest": []any{"x", "y", "z"}}
	for b.Loop() {
		if _, err := t.tmpl.Expand(t.params, args); err != nil {
			b.Fatal(err)
		}
	}
}
