package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// noBus hides a store's Bus: decisions reach other replicas by the poll only.
type noBus struct{ state.Store }

// testKey is the cluster key of the replicas in these tests.
var testKey, _ = LoadKey("cluster-test-key-0123456789abcdef0123", nil)

// sealed is st as every replica of the test cluster uses it.
func sealed(st state.Store) *state.Signed { return testKey.Signed(st, nil) }

// replicaPairs returns two boards over one store, as two replicas see it:
// the store itself (memory, shared by both in this process), or two Redis
// clients of one server.
func replicaPairs(t *testing.T) map[string][2]*Approvals {
	mem, mem2 := sealed(state.NewMemory()), sealed(noBus{state.NewMemory()})
	pairs := map[string][2]*Approvals{
		"memory":         {{Store: mem, Replica: "r1"}, {Store: mem, Replica: "r2"}},
		"memory-no-bus":  {{Store: mem2, Replica: "r1"}, {Store: mem2, Replica: "r2"}},
		"redis":          {},
		"redis-fallback": {},
	}
	srv := redistest.Start(t)
	prefix := fmt.Sprintf("appr-%d:", time.Now().UnixNano())
	client := func() *state.Signed {
		r, err := state.NewRedis(srv.URL, prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return sealed(r)
	}
	pairs["redis"] = [2]*Approvals{{Store: client(), Replica: "r1"}, {Store: client(), Replica: "r2"}}
	fprefix := prefix + "fb:"
	fb := func() *state.Signed {
		r, err := state.NewRedis(srv.URL, fprefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return sealed(state.NewFallback(r, nil))
	}
	pairs["redis-fallback"] = [2]*Approvals{{Store: fb(), Replica: "r1"}, {Store: fb(), Replica: "r2"}}
	return pairs
}

type waited struct {
	answer policy.Approval
	err    error
	at     time.Time
}

// post starts a waiting call on b and returns its id (once listed on the
// other board) and where its answer arrives.
func post(t *testing.T, ctx context.Context, b, other *Approvals, timeout time.Duration) (string, <-chan waited) {
	t.Helper()
	now := time.Now()
	a := Approval{ID: NewApprovalID(), Tool: "deploy", Provider: "local", Identity: "process:1", Since: now, Expires: now.Add(timeout)}
	done := make(chan waited, 1)
	go func() {
		v, err := b.Wait(ctx, a, nil)
		done <- waited{v, err, time.Now()}
	}()
	testutil.WaitFor(t, "the entry on the other replica", 10*time.Second, func() bool {
		got, ok, err := other.Get(ctx, a.ID)
		return err == nil && ok && got.Replica == b.Replica && got.Tool == "deploy"
	})
	return a.ID, done
}

// A call waiting on one replica is listed and decided on the other, once;
// it resumes with the answer well within a second (a poll at most), and
// its entry is gone from both.
func TestApprovalDecidedOnAnotherReplica(t *testing.T) {
	for name, pair := range replicaPairs(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			holder, decider := pair[0], pair[1]
			holder.Listen(ctx)
			decider.Listen(ctx)
			for _, want := range []policy.Approval{policy.ApprovedOnce, policy.ApprovedForSession, policy.ApprovedAlways, policy.Declined} {
				id, done := post(t, ctx, holder, decider, time.Minute)
				list, err := decider.List(ctx)
				if err != nil || len(list) != 1 || list[0].ID != id {
					t.Fatalf("List on the other replica = %+v, %v", list, err)
				}
				start := time.Now()
				if ok, err := decider.Decide(ctx, id, want); !ok || err != nil {
					t.Fatalf("Decide = %v, %v", ok, err)
				}
				if ok, _ := decider.Decide(ctx, id, policy.ApprovedOnce); ok {
					t.Fatal("a second decision was taken")
				}
				if ok, _ := holder.Decide(ctx, id, policy.Declined); ok {
					t.Fatal("a second decision, on the holding replica, was taken")
				}
				w := <-done
				if w.err != nil || w.answer != want {
					t.Fatalf("Wait = %v, %v; want %v", w.answer, w.err, want)
				}
				took := w.at.Sub(start)
				t.Logf("%s: decided on r2, resumed on r1 after %v", name, took)
				if limit := holder.poll() + 2*time.Second; took > limit { // a poll, plus slack for a loaded machine
					t.Errorf("resumed after %v, want under %v", took, limit)
				}
				for _, b := range pair {
					if l, _ := b.List(ctx); len(l) != 0 {
						t.Fatalf("%s still lists %+v", b.Replica, l)
					}
				}
			}
		})
	}
}

// A call whose deadline passes withdraws its entry: DENIED by timeout, and
// a console answering afterwards finds nothing. A call whose client goes
// away does too.
func TestApprovalWithdrawn(t *testing.T) {
	for name, pair := range replicaPairs(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			holder, decider := pair[0], pair[1]
			id, done := post(t, ctx, holder, decider, 300*time.Millisecond)
			w := <-done
			if !errors.Is(w.err, ErrApprovalTimeout) || w.answer.Approved() {
				t.Fatalf("after the deadline: %v, %v", w.answer, w.err)
			}
			if ok, _ := decider.Decide(ctx, id, policy.ApprovedOnce); ok {
				t.Fatal("a withdrawn call was approved")
			}
			if _, ok, _ := decider.Get(ctx, id); ok {
				t.Fatal("a withdrawn call is still listed")
			}

			cctx, ccancel := context.WithCancel(ctx)
			id, done = post(t, cctx, holder, decider, time.Minute)
			ccancel()
			if w := <-done; !errors.Is(w.err, context.Canceled) {
				t.Fatalf("after the client left: %v, %v", w.answer, w.err)
			}
			if ok, _ := decider.Decide(ctx, id, policy.ApprovedOnce); ok {
				t.Fatal("a cancelled call was approved")
			}
		})
	}
}

// The entry is a lease the waiting call renews: listed as long as the call
// waits, gone within a lease when its replica stops renewing (a crash).
func TestApprovalLease(t *testing.T) {
	mem := sealed(state.NewMemory())
	holder := &Approvals{Store: mem, Replica: "r1", Lease: time.Second} // renewed every 333 ms
	other := &Approvals{Store: mem, Replica: "r2"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, done := post(t, ctx, holder, other, time.Minute)
	deadline := time.Now().Add(2 * holder.lease()) // two leases: renewed, still there
	for time.Now().Before(deadline) {
		if _, ok, _ := other.Get(ctx, id); !ok {
			t.Fatal("the entry of a waiting call expired")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ok, _ := other.Decide(ctx, id, policy.ApprovedOnce); !ok {
		t.Fatal("decide")
	}
	<-done
	// A crashed replica's entry: posted, never renewed.
	crashed := Approval{ID: NewApprovalID(), Tool: "deploy", Since: time.Now(), Expires: time.Now().Add(time.Hour)}
	if err := mem.Put(ctx, entryKey(crashed.ID), []byte(`{"id":"`+crashed.ID+`"}`), holder.lease()); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the unrenewed entry to expire", 10*time.Second, func() bool {
		_, ok, _ := other.Get(ctx, crashed.ID)
		return !ok
	})
}

// Ids that are no entry's are refused before the store is asked.
func TestApprovalIDs(t *testing.T) {
	b := &Approvals{Store: state.NewSigned(state.NewMemory(), nil, nil)}
	for _, id := range []string{"", "../x", "a*", "a:b", string(make([]byte, 65))} {
		if _, ok, err := b.Get(context.Background(), id); ok || err != nil {
			t.Errorf("Get(%q) = %v, %v", id, ok, err)
		}
	}
	if id := NewApprovalID(); !validID(id) {
		t.Errorf("NewApprovalID() = %q is not valid", id)
	}
	if _, err := b.Decide(context.Background(), "x", policy.Approval(42)); err == nil {
		t.Error("an unknown answer was accepted")
	}
}
