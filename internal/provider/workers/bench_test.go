package workers

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// BenchmarkJobOverhead measures side by side, in one loop, the fake codex
// worker run directly (proc.Run) and the same job through the provider
// (path checks, git snapshot before and after with content hashes, output
// parsing, one verification command) on a repository of 200 files with 20
// dirty ones. It reports both times and their ratio.
func BenchmarkJobOverhead(b *testing.B) {
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("src/pkg%d/f%d.go", i%10, i)] = "package x\n"
	}
	root := newRepo(b, files)
	for i := range 20 {
		writeFile(b, root, fmt.Sprintf("src/pkg%d/f%d.go", i%10, i), "package x // dirty\n")
	}
	bin := fake(b, "codex")
	p := newProvider(b, "codex", root)
	args, _ := json.Marshal(map[string]any{"goal": "fake:write=src/pkg1/new.go", "mode": "implement",
		"allowed_paths": []string{"src/pkg1"}, "verify_commands": []string{"true"}})
	out := b.TempDir() + "/answer"
	var direct, via time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := proc.Run(context.Background(), proc.Spec{Path: bin, Args: []string{"exec", "--json", "-C", root, "-o", out, "-"},
			Env: p.env(), Stdin: []byte("fake:write=src/pkg1/new.go")})
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res.ExitCode)
		}
		t1 := time.Now()
		if _, err := p.Call(context.Background(), tool("run"), args); err != nil {
			b.Fatal(err)
		}
		direct, via = direct+t1.Sub(t0), via+time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(direct.Milliseconds())/n, "direct-ms/job")
	b.ReportMetric(float64(via.Milliseconds())/n, "provider-ms/job")
	b.ReportMetric(float64(via)/float64(direct), "ratio")
}
