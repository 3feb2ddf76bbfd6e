package jsrun

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The hostile suite: every bomb ends with its own clear error within its
// limit plus a second, and the server's memory does not move. The children
// run under testLimits (128 MiB, 3 s of CPU, 5 s), so a failure here cannot
// hurt the machine.
var bombs = []struct {
	name string
	code string
	kind []Kind // what may stop it
	// within is the limit it runs into (plus a second, checked).
	within time.Duration
}{
	{"join", `const s = "x".repeat(1<<24); return new Array(1<<22).join(s).length`, []Kind{KindMemory}, 0},
	{"replace $&", `const s = "x".repeat(1<<22); return s.replace(/x/g, "$&$&$&$&").length`, []Kind{KindMemory}, 0},
	{"replaceAll $&", `const s = "x".repeat(1<<22); return s.replaceAll("x", "$&$&$&$&$&$&$&$&").length`, []Kind{KindMemory}, 0},
	{"split", `const s = "x".repeat(1<<24); const a = []; for (;;) a.push(s.split(""))`, []Kind{KindMemory}, 0},
	{"concat doubling", `let s = "xx"; for (;;) s = s.concat(s, s); s.length`, []Kind{KindMemory}, 0},
	{"push loop", `const a = []; while (true) a.push(new Array(1e6).fill(0))`, []Kind{KindMemory}, 0},
	// new Array(1e6) alone is sparse in goja (allocates next to nothing):
	// a loop that runs into the time or CPU limit.
	{"sparse push loop", `const a = []; while (true) a.push(new Array(1e6))`, []Kind{KindTimeout, KindCPU, KindMemory}, 0},
	{"deep recursion", `function f(n) { return f(n + 1) + 1 } f(0)`, []Kind{KindException}, 0},
	{"promise storm", `for (;;) { Promise.resolve().then(() => {}) }`, []Kind{KindMemory, KindTimeout, KindCPU}, 0},
	{"microtask loop", `const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})`, []Kind{KindMemory, KindTimeout, KindCPU}, 0},
	{"busy loop", `for (;;) {}`, []Kind{KindTimeout, KindCPU, KindMemory}, 0},
}

// limitOf is the wall-clock bound a kind runs into. The CPU limit counts
// processor seconds, which on a loaded machine come slower than wall
// seconds, so its wall bound is the script's deadline (the parent kills
// the child there whatever it used).
func limitOf(k Kind, l Limits) time.Duration {
	return l.Timeout // memory and exceptions come well before it
}

func TestHostileScripts(t *testing.T) {
	p := isolatedPool(t)
	before := rss()
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			start := time.Now()
			out, err := p.Run(context.Background(), Script{Code: b.code, Limits: testLimits}, nil)
			took := time.Since(start)
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("no error: %v %v", out, err)
			}
			ok := raceEnabled && (je.Kind == KindTimeout || je.Kind == KindCPU) // slower under the race detector
			for _, k := range b.kind {
				ok = ok || je.Kind == k
			}
			if !ok {
				t.Fatalf("%s: %s, want one of %v", je.Kind, je.Message, b.kind)
			}
			if max := limitOf(je.Kind, testLimits) + time.Second; took > max && !raceEnabled {
				t.Fatalf("%s took %s, more than %s", je.Kind, took, max)
			}
			want := map[Kind]string{KindMemory: "the script used more than 128 MiB", KindCPU: "the script used more than 3s of CPU",
				KindTimeout: "the code did not finish within", KindException: "RangeError: Maximum call stack size exceeded"}[je.Kind]
			if !strings.Contains(je.Message, want) {
				t.Fatalf("message %q, want %q", je.Message, want)
			}
			t.Logf("%s after %s: %s", je.Kind, took.Round(time.Millisecond), je.Message)
		})
	}
	if grew := rss() - before; before > 0 && grew > 64<<20 {
		t.Fatalf("the server's RSS grew by %d MiB", grew>>20)
	}
}

// TestCPULimit: a busy loop under a CPU limit below its deadline ends with
// the CPU error (CPU seconds: on a loaded machine the wall time is longer).
func TestCPULimit(t *testing.T) {
	p := isolatedPool(t)
	l := Limits{Timeout: 30 * time.Second, CPU: time.Second, Memory: 128 << 20}
	_, err := p.Run(context.Background(), Script{Code: "for (;;) {}", Limits: l}, nil)
	var je *Error
	if !errors.As(err, &je) || je.Kind != KindCPU || je.Message != "the script used more than 1s of CPU" {
		t.Fatalf("got %v", err)
	}
}

// TestHostileNeighbour: a bomb and an innocent loop at once; the loop's
// script succeeds, the bomb fails with its own error.
func TestHostileNeighbour(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector multiplies the bomb's time and memory; the bound is checked without it")
	}
	p := NewPool(2)
	if ok, why := Isolation(); !ok {
		t.Skip(why)
	}
	t.Cleanup(p.Close)
	var wg sync.WaitGroup
	var bombErr, loopErr error
	var loopOut *Output
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, bombErr = p.Run(context.Background(), Script{Code: bombs[0].code, Limits: testLimits}, nil)
	}()
	go func() {
		defer wg.Done()
		loopOut, loopErr = p.Run(context.Background(), Script{Code: `let n = 0; for (let i = 0; i < 3e6; i++) n += i % 7; n`, Limits: testLimits}, nil)
	}()
	wg.Wait()
	var je *Error
	if !errors.As(bombErr, &je) || je.Kind != KindMemory {
		t.Fatalf("bomb: %v", bombErr)
	}
	if loopErr != nil || string(loopOut.Result) != "8999994" {
		t.Fatalf("innocent loop: %v %v", loopOut, loopErr)
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
