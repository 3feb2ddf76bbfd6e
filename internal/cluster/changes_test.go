package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
)

// A toggle and a restart made on one replica reach the others as a Change
// (the restart not on the replica that made it); a replica that starts
// later gets the choices and none of the restarts made before it.
func TestChangesAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	prefix := fmt.Sprintf("chg-%d:", time.Now().UnixNano())
	redisStore := func() *state.Signed {
		r, err := state.NewRedis(srv.URL, prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return sealed(r)
	}
	mem, mem2 := sealed(state.NewMemory()), sealed(noBus{state.NewMemory()})
	stores := map[string]func() *state.Signed{
		"memory":        func() *state.Signed { return mem },
		"memory-no-bus": func() *state.Signed { return mem2 },
		"redis":         redisStore,
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			watch := func(replica string) (*Changes, chan Change) {
				c := &Changes{Store: store(), Replica: replica}
				ch := make(chan Change, 16)
				c.Watch(ctx, func(x Change) { ch <- x })
				return c, ch
			}
			r1, c1 := watch("r1")
			_, c2 := watch("r2")
			for _, c := range []chan Change{c1, c2} {
				if first := <-c; !first.First {
					t.Fatalf("the first change is not First: %+v", first)
				}
			}
			next := func(c chan Change, what string) (Change, time.Duration) {
				t.Helper()
				start := time.Now()
				select {
				case x := <-c:
					return x, time.Since(start)
				case <-ctx.Done():
					t.Fatalf("no change for %s", what)
				}
				return Change{}, 0
			}

			start := time.Now()
			if err := r1.SetEnabled(ctx, "github", false); err != nil {
				t.Fatal(err)
			}
			x, _ := next(c2, "the toggle")
			took := time.Since(start)
			t.Logf("%s: a toggle on r1 reached r2 after %v", name, took)
			if on, ok := x.Enabled["github"]; !ok || on || len(x.Restart) != 0 {
				t.Fatalf("r2 got %+v", x)
			}
			if took > DefaultChangesPoll+2*time.Second { // a poll, plus slack for a loaded machine
				t.Errorf("the toggle took %v", took)
			}
			if x, _ := next(c1, "r1's own toggle"); x.Enabled["github"] || len(x.Restart) != 0 {
				t.Fatalf("r1 got %+v", x)
			}

			if err := r1.Restarted(ctx, "up"); err != nil {
				t.Fatal(err)
			}
			if x, _ := next(c2, "the restart"); !slices.Equal(x.Restart, []string{"up"}) {
				t.Fatalf("r2 got %+v", x)
			}
			if x, _ := next(c1, "r1's own restart"); len(x.Restart) != 0 {
				t.Fatalf("r1 restarts again what it restarted: %+v", x)
			}

			_, c3 := watch("r3")
			if x := <-c3; !x.First || x.Enabled["github"] || len(x.Restart) != 0 {
				t.Fatalf("a replica started later got %+v", x)
			}
			if err := r1.Bump(ctx); err != nil { // a pin approved: a change with nothing else in it
				t.Fatal(err)
			}
			for _, c := range []chan Change{c1, c2, c3} {
				if x, _ := next(c, "the bump"); len(x.Restart) != 0 || x.First {
					t.Fatalf("after a bump: %+v", x)
				}
			}
		})
	}
}
