package faults

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/jsrun"
)

// TestHostileScripts: execute_javascript bombs against a serving runtime.
// Each ends with its own clear error within its limit plus a second, an
// innocent script running beside a bomb succeeds, the runtime keeps
// serving (a local script answers after every bomb) and its resident memory
// stays within budget. The scripts' processes run at 128 MiB and 3 s of CPU,
// so a failure cannot hurt the machine.
func TestHostileScripts(t *testing.T) {
	if ok, why := jsrun.Isolation(); !ok {
		t.Skip(why)
	}
	if raceEnabled {
		t.Skip("the race detector multiplies the scripts' time and memory; the bounds are checked without it")
	}
	dir := t.TempDir()
	p := &project{dir: dir, config: filepath.Join(dir, "agent-tools.yaml"), audit: filepath.Join(dir, "audit.jsonl")}
	tools := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := "#!/bin/sh\n# @description Print a line naming our pid.\necho probe-ok-$$\n"
	if err := os.WriteFile(filepath.Join(tools, "probe"), []byte(probe), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "mode: flat\nlocal:\n  requireConfirm: false\ncode:\n  memory: 128MiB\n  cpu: 3s\n  timeout: 5s\n"
	if err := os.WriteFile(p.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := serve(t, p)
	js := r.tool("execute_javascript")
	r.alive()
	before := rss()

	bombs := []struct{ name, code, want string }{
		{"join", `const s = "x".repeat(1<<24); return new Array(1<<22).join(s).length`, "the script used more than 128 MiB"},
		{"replace $&", `const s = "x".repeat(1<<22); return s.replace(/x/g, "$&$&$&$&").length`, "the script used more than 128 MiB"},
		{"split", `const s = "x".repeat(1<<24); const a = []; for (;;) a.push(s.split(""))`, "the script used more than 128 MiB"},
		{"concat doubling", `let s = "xx"; for (;;) s = s.concat(s, s); s.length`, "the script used more than 128 MiB"},
		{"push loop", `const a = []; while (true) a.push(new Array(1e6).fill(0))`, "the script used more than 128 MiB"},
		{"deep recursion", `function f(n) { return f(n + 1) + 1 } f(0)`, "RangeError: Maximum call stack size exceeded"},
		{"24 MB search query", `const q = "x".repeat(12 << 20) + "y".repeat(12 << 20); tools.search(q)`, "TypeError: tools.search(query, {limit}): the query has 25165824 characters"},
	}
	for _, b := range bombs {
		start := time.Now()
		o := r.callWith(js, 30*time.Second, map[string]any{"code": b.code})
		took := time.Since(start)
		if !o.isError || !strings.Contains(o.text, b.want) {
			t.Errorf("%s: %+v, want an error with %q", b.name, o, b.want)
		}
		if took > 6*time.Second { // the 5 s timeout plus a second bounds every limit here
			t.Errorf("%s took %s", b.name, took)
		}
		record("script: "+b.name, 1, b.want+" after "+took.Round(10*time.Millisecond).String())
		r.alive()
	}

	// A bomb and an innocent loop at once.
	var wg sync.WaitGroup
	var bomb, loop outcome
	wg.Add(2)
	go func() {
		defer wg.Done()
		bomb = r.callWith(js, 30*time.Second, map[string]any{"code": bombs[0].code})
	}()
	go func() {
		defer wg.Done()
		loop = r.callWith(js, 30*time.Second, map[string]any{"code": `let n = 0; for (let i = 0; i < 3e6; i++) n += i % 7; n`})
	}()
	wg.Wait()
	if !bomb.isError || !strings.Contains(bomb.text, "the script used more than 128 MiB") {
		t.Errorf("bomb beside a loop: %+v", bomb)
	}
	if loop.isError || !strings.Contains(loop.text, `"result":8999994`) {
		t.Errorf("innocent loop beside a bomb: %+v", loop)
	}
	r.alive()
	if grew := rss() - before; before > 0 && grew > 64<<20 {
		t.Errorf("the runtime's resident memory grew by %d MiB", grew>>20)
	}
}

// rss is this process's resident set in bytes (0 where unknown).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(ln, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}
