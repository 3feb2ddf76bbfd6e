package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// blockingHost holds every script in its tools.call until the test lets
// it go: a script inside Call is running (its process started, its slot
// held), so the host's count is the number of scripts running, by the
// identity the call came with.
type blockingHost struct {
	mu      sync.Mutex
	running map[string]int
	peak    map[string]int
	entered chan string // an identity's script is running
	release map[string]chan struct{}
}

func newBlockingHost(ids ...string) *blockingHost {
	h := &blockingHost{running: map[string]int{}, peak: map[string]int{}, entered: make(chan string, 64), release: map[string]chan struct{}{}}
	for _, id := range ids {
		h.release[id] = make(chan struct{})
	}
	return h
}

func (h *blockingHost) Search(context.Context, string, int) []catalog.Tool { return nil }
func (h *blockingHost) Describe(context.Context, string) (catalog.Tool, bool) {
	return catalog.Tool{}, false
}

func (h *blockingHost) Call(ctx context.Context, _ string, _ json.RawMessage, _ any) (*provider.Result, error) {
	id := provider.CallerFrom(ctx).User
	h.mu.Lock()
	h.running[id]++
	h.peak[id] = max(h.peak[id], h.running[id])
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.running[id]--
		h.mu.Unlock()
	}()
	h.entered <- id
	select {
	case <-h.release[id]:
		return &provider.Result{Text: "released"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *blockingHost) counts(id string) (running, peak int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running[id], h.peak[id]
}

type scriptOutcome struct {
	id  string
	res *provider.Result
	err error
}

// TestScriptsHaveACapInSum (#44 item 7): 12 sessions held 14 script
// processes and 2.9 GiB together, each within its own 256 MiB, and one
// token could hold ~100. Now scripts hold slots: at most maxPerIdentity of
// one identity's and maxConcurrent in sum run at once; a script over a cap
// queues for the wait, then is refused with PROVIDER_UNAVAILABLE,
// retry_after_ms and which cap; another identity keeps its own share
// until the sum is reached; a slot comes back when its script ends, done
// or cancelled, running or queued, and the count returns to zero.
func TestScriptsHaveACapInSum(t *testing.T) {
	const alice, bob = "token:alice", "token:bob"
	p := New(Options{Code: CodeOptions{MaxConcurrent: 3, MaxPerIdentity: 2, QueueWait: 300 * time.Millisecond}})
	h := newBlockingHost(alice, bob)
	js := tool(t, p, JavaScriptTool)
	args, _ := json.Marshal(map[string]any{"code": `await tools.call("block", {})`})
	out := make(chan scriptOutcome, 32)
	start := func(ctx context.Context, id string) {
		go func() {
			res, err := p.CallValues(provider.WithCaller(ctx, provider.Caller{User: id}), js, args, provider.Values{Script: h})
			out <- scriptOutcome{id, res, err}
		}()
	}
	await := func(what string) scriptOutcome {
		t.Helper()
		select {
		case o := <-out:
			return o
		case <-time.After(time.Minute):
			t.Fatalf("%s: no outcome", what)
		}
		return scriptOutcome{}
	}
	enter := func(want string) {
		t.Helper()
		select {
		case id := <-h.entered:
			if id != want {
				t.Fatalf("%s's script started, want %s's", id, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s's script did not start", want)
		}
	}
	refused := func(o scriptOutcome, id, cap string, limit int) {
		t.Helper()
		te, ok := toolerr.As(o.err)
		if o.id != id || !ok || te.Code != toolerr.ProviderUnavailable || te.Details["cap"] != cap || te.Details["limit"] != limit {
			t.Fatalf("%s: got %+v %v, want %s's script refused by the %s cap of %d", o.id, o.res, o.err, id, cap, limit)
		}
		ms, _ := te.Details["retry_after_ms"].(int64)
		if most := (p.opts.scriptLimits().Timeout + 2*jsrun.Grace + 100*time.Millisecond).Milliseconds(); ms < 100 || ms > most {
			t.Fatalf("retry_after_ms %v, want 100..%d: %s", te.Details["retry_after_ms"], most, te.JSON())
		}
	}
	ran := func(o scriptOutcome, id string) {
		t.Helper()
		if o.id != id || o.err != nil || o.res == nil || o.res.IsError || !strings.Contains(o.res.Text, "released") {
			t.Fatalf("%s: got %+v %v, want %s's script done", o.id, o.res, o.err, id)
		}
	}
	slots := func(wantRunning, wantWaiting int) {
		t.Helper()
		if r, w := p.slots.Running(); r != wantRunning || w != wantWaiting {
			t.Fatalf("slots: %d running, %d waiting; want %d, %d", r, w, wantRunning, wantWaiting)
		}
	}

	// Five of alice's at once: two run, three are refused (one at once,
	// the queue being as long as her share, two after their wait).
	for range 5 {
		start(context.Background(), alice)
	}
	for range 3 {
		refused(await("alice over her share"), alice, jsrun.CapPerIdentity, 2)
	}
	enter(alice)
	enter(alice)
	if running, peak := h.counts(alice); running != 2 || peak != 2 || p.slots.RunningFor(alice) != 2 {
		t.Fatalf("alice: %d running (peak %d, slots %d), want 2", running, peak, p.slots.RunningFor(alice))
	}

	// Bob has his own share, up to the sum of 3: one runs, one is refused
	// by the global cap.
	start(context.Background(), bob)
	start(context.Background(), bob)
	refused(await("bob over the sum"), bob, jsrun.CapGlobal, 3)
	enter(bob)
	slots(3, 0)

	// A script that ends hands its slot back: alice's next runs.
	h.release[alice] <- struct{}{}
	ran(await("alice's first"), alice)
	aliceCtx, cancelAlice := context.WithCancel(context.Background())
	start(aliceCtx, alice)
	enter(alice)
	slots(3, 0)

	// A running script that is cancelled hands its slot back too (the run
	// ends cancelled, or as the CANCELLED its tools.call threw: whichever
	// the server sees first).
	cancelAlice()
	if o := await("alice cancelled"); o.id != alice || !cancelled(o.err) {
		t.Fatalf("cancelled script: %+v %v", o.res, o.err)
	}
	slots(2, 0)

	// Queued with a long wait: a cancelled waiter leaves nothing behind,
	// and a waiter gets the slot of the script that ends.
	p.slots.SetCaps(jsrun.Caps{Total: 3, PerIdentity: 2, Wait: time.Hour})
	start(context.Background(), alice) // alice: 2 running
	enter(alice)
	waitCtx, cancelWait := context.WithCancel(context.Background())
	start(waitCtx, alice)
	waitSlots(t, p, 1)
	cancelWait()
	if o := await("alice's waiter cancelled"); o.id != alice || !errors.Is(o.err, context.Canceled) {
		t.Fatalf("cancelled waiter: %+v %v", o.res, o.err)
	}
	slots(3, 0)
	start(context.Background(), bob) // the sum is reached: bob queues
	waitSlots(t, p, 1)
	h.release[alice] <- struct{}{}
	ran(await("alice's second"), alice)
	enter(bob) // the waiter took the slot alice's script gave back

	// Everything ends: the count returns to zero.
	close(h.release[alice])
	close(h.release[bob])
	for range 3 {
		if o := await("the rest"); o.err != nil || o.res.IsError {
			t.Fatalf("%s: %+v %v", o.id, o.res, o.err)
		}
	}
	slots(0, 0)
	for _, id := range []string{alice, bob} {
		if running, peak := h.counts(id); running != 0 || peak > 2 {
			t.Fatalf("%s: %d still running, peak %d", id, running, peak)
		}
	}
}

func cancelled(err error) bool {
	te, ok := toolerr.As(err)
	return errors.Is(err, context.Canceled) || ok && te.Code == toolerr.Cancelled
}

// waitSlots waits until n scripts queue for a slot.
func waitSlots(t *testing.T, p *Provider, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, w := p.slots.Running(); w != n; _, w = p.slots.Running() {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting, want %d", w, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// The config's caps reach the process's slots (Build), which a reload's
// provider shares with the one it replaces; a provider made without
// Options.Slots has its own.
func TestBuildSharesTheProcessSlots(t *testing.T) {
	before := jsrun.ServerSlots().Caps()
	t.Cleanup(func() { jsrun.ServerSlots().SetCaps(before) })
	build := func(c *config.Code) *Provider {
		t.Helper()
		pr, err := Build(provider.Header{}, c, provider.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		return pr.(*Provider)
	}
	a := build(&config.Code{MaxConcurrent: 7, MaxPerIdentity: 3})
	if got, want := jsrun.ServerSlots().Caps(), (jsrun.Caps{Total: 7, PerIdentity: 3, Wait: jsrun.DefaultWait}); got != want {
		t.Fatalf("caps %+v, want %+v", got, want)
	}
	b := build(&config.Code{}) // a reload back to the defaults
	if a.slots != jsrun.ServerSlots() || b.slots != a.slots {
		t.Fatal("the providers Build makes do not share the process's slots")
	}
	if got := jsrun.ServerSlots().Caps(); got.Total != jsrun.DefaultTotal() || got.PerIdentity != jsrun.DefaultPerIdentity {
		t.Fatalf("caps after a reload to the defaults: %+v", got)
	}
	if c := New(Options{}); c.slots == jsrun.ServerSlots() {
		t.Fatal("a provider without Options.Slots shares the process's")
	}
}
