package jsrun

import (
	"context"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// hostAsync installs later(x): a Promise that host work settles off the VM
// goroutine, doubling x (rejecting when x is negative).
func hostAsync(inflight, peak *atomic.Int32, release <-chan struct{}) Setup {
	return func(_ context.Context, s *Session, vm *goja.Runtime) error {
		return vm.Set("later", func(c goja.FunctionCall) goja.Value {
			x := c.Argument(0).ToInteger()
			p, resolve, reject := vm.NewPromise()
			s.Go(func() func() error {
				n := inflight.Add(1)
				for {
					m := peak.Load()
					if n <= m || peak.CompareAndSwap(m, n) {
						break
					}
				}
				if release != nil {
					<-release
				}
				inflight.Add(-1)
				return func() error {
					if x < 0 {
						return reject(vm.NewTypeError("negative"))
					}
					return resolve(x * 2)
				}
			})
			return vm.ToValue(p)
		})
	}
}

func TestRunWithHostPromises(t *testing.T) {
	var inflight, peak atomic.Int32
	tests := []struct {
		name, code, want, errHas string
	}{
		{"await", `await later(21)`, `42`, ""},
		{"all", `const r = await Promise.all([later(1), later(2), later(3)]); r.reduce((a, b) => a + b)`, `12`, ""},
		{"chain", `const a = await later(1); await later(a)`, `4`, ""},
		{"reject", `await later(-1)`, "", "TypeError: negative"},
		{"caught", `let m; try { await later(-1) } catch (e) { m = "caught " + e.message }; m`, `"caught negative"`, ""},
		{"unawaited", `later(1); 7`, `7`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RunWith(context.Background(), tc.code, Limits{}, hostAsync(&inflight, &peak, nil))
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("err = %v, want %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(out.Result) != tc.want {
				t.Fatalf("result = %s, want %s", out.Result, tc.want)
			}
		})
	}
}

// Host work still out when the watchdog fires does not hold the run.
func TestRunWithHostWorkTimesOut(t *testing.T) {
	var inflight, peak atomic.Int32
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	_, err := RunWith(context.Background(), `await later(1)`, Limits{Timeout: 100 * time.Millisecond}, hostAsync(&inflight, &peak, release))
	e, ok := err.(*Error)
	if !ok || e.Kind != KindTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s", d)
	}
}

// The runaway: arrays of a million elements pushed forever. The
// sampler stops it, and the heap it reached stays near the cap (it samples
// every 10 ms: the overshoot is what 10 ms of allocation adds).
func TestRunawayArraysStopNearTheCap(t *testing.T) {
	const limit = 64 << 20
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	base := heapBytes(s)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		ss := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if n := heapBytes(ss); n > peak.Load() {
					peak.Store(n)
				}
			}
		}
	}()
	_, err := Run(context.Background(), `const a = []; while (true) a.push(new Array(1e6))`, Limits{Timeout: time.Minute, MaxHeapGrowth: limit})
	close(stop)
	<-sampled
	e, ok := err.(*Error)
	if !ok || e.Kind != KindMemory || e.Message != "the code grew the heap by more than 64 MiB" {
		t.Fatalf("err = %v, want the heap limit", err)
	}
	if grew := int64(peak.Load()) - int64(base); grew > 2*limit {
		t.Fatalf("the heap grew %d MiB before the stop (cap %d MiB)", grew>>20, limit>>20)
	}
	// The process goes on: the next run works.
	if out, err := Run(context.Background(), `1 + 1`, Limits{}); err != nil || string(out.Result) != "2" {
		t.Fatalf("after the runaway: %v %v", out, err)
	}
}
