package agenttools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	agenttools "github.com/agent-tools/agent-tools"
)

// clock is a test clock that moves only when told.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// listing is a Provider whose tool list the test changes, counting the
// runtime's Tools calls; it is not a ChangeNotifier (notifyingListing is).
type listing struct {
	id    string
	lists atomic.Int32
	mu    sync.Mutex
	names []string
}

func (l *listing) Info() agenttools.ProviderInfo {
	return agenttools.ProviderInfo{ID: l.id, Description: "A backend whose tools change."}
}

func (l *listing) Tools(context.Context) ([]*agenttools.Tool, error) {
	l.lists.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*agenttools.Tool
	for _, n := range l.names {
		out = append(out, &agenttools.Tool{Action: n, Description: "Tool " + n + ".", ReadOnly: true})
	}
	return out, nil
}

func (l *listing) Call(_ context.Context, c *agenttools.CallInfo, _ json.RawMessage) (*agenttools.Result, error) {
	return &agenttools.Result{Text: c.Action}, nil
}

func (l *listing) set(names ...string) {
	l.mu.Lock()
	l.names = names
	l.mu.Unlock()
}

type notifyingListing struct {
	*listing
	mu      sync.Mutex
	changed func()
}

func (n *notifyingListing) NotifyChanges(changed func()) {
	n.mu.Lock()
	n.changed = changed
	n.mu.Unlock()
}

func (n *notifyingListing) fire() {
	n.mu.Lock()
	f := n.changed
	n.mu.Unlock()
	f()
}

func listed(t *testing.T, s *agenttools.Session, prefix string) []string {
	t.Helper()
	tools, err := s.Tools()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range tools {
		if tl.Provider == prefix {
			out = append(out, tl.Name)
		}
	}
	return out
}

func callOK(t *testing.T, s *agenttools.Session, name string) {
	t.Helper()
	if _, err := s.Call(context.Background(), name, nil); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestProviderRelistInterval: a Provider that is not a ChangeNotifier is
// listed once, then not again on the call path until the interval has
// passed; then its changed list is served.
func TestProviderRelistInterval(t *testing.T) {
	rt := newRT(t, agenttools.Options{RelistInterval: time.Minute})
	clk := newClock()
	agenttools.SetClock(rt, clk.now)
	p := &listing{id: "shop"}
	p.set("one")
	must(t, rt.AddProvider(p))
	start(t, rt)
	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()

	callOK(t, s, "shop_one")
	base := p.lists.Load()
	for range 20 {
		callOK(t, s, "shop_one")
	}
	if got := p.lists.Load() - base; got != 0 {
		t.Fatalf("20 calls within the interval listed the provider %d times, want 0", got)
	}

	p.set("one", "two")
	clk.advance(time.Minute - time.Second)
	callOK(t, s, "shop_one")
	if got := listed(t, s, "shop"); !slices.Equal(got, []string{"shop_one"}) {
		t.Fatalf("before the interval, the catalog already changed: %v", got)
	}
	if got := p.lists.Load() - base; got != 0 {
		t.Fatalf("a call before the interval listed the provider %d times", got)
	}

	clk.advance(time.Second)
	callOK(t, s, "shop_one")
	if got := p.lists.Load() - base; got != 1 {
		t.Fatalf("the first call after the interval listed the provider %d times, want 1", got)
	}
	if got := listed(t, s, "shop"); !slices.Equal(got, []string{"shop_one", "shop_two"}) {
		t.Fatalf("after the interval the catalog is %v, want shop_one and shop_two", got)
	}
	callOK(t, s, "shop_two")
	if got := p.lists.Load() - base; got != 1 {
		t.Fatalf("the interval starts again: listed %d times, want 1", got)
	}
}

// TestProviderRelistUnknownAtOnce: a tool the provider added is callable at
// once, whatever the interval: an unknown name re-lists.
func TestProviderRelistUnknownAtOnce(t *testing.T) {
	rt := newRT(t, agenttools.Options{RelistInterval: time.Hour})
	agenttools.SetClock(rt, newClock().now)
	p := &listing{id: "shop"}
	p.set("one")
	must(t, rt.AddProvider(p))
	start(t, rt)
	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()
	callOK(t, s, "shop_one")
	p.set("one", "two")
	callOK(t, s, "shop_two")
}

// TestProviderRelistEveryRead: a negative interval lists on every call (the
// behaviour before the interval existed).
func TestProviderRelistEveryRead(t *testing.T) {
	rt := newRT(t, agenttools.Options{RelistInterval: -1})
	agenttools.SetClock(rt, newClock().now)
	p := &listing{id: "shop"}
	p.set("one")
	must(t, rt.AddProvider(p))
	start(t, rt)
	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()
	callOK(t, s, "shop_one")
	base := p.lists.Load()
	for range 5 {
		callOK(t, s, "shop_one")
	}
	if got := p.lists.Load() - base; got != 5 {
		t.Errorf("5 calls listed the provider %d times, want 5", got)
	}
}

// TestProviderChangeNotifierListsOnCallback: a ChangeNotifier is listed
// exactly when its callback fires, however much time passes in between and
// however often a Provider beside it without ChangeNotifier is re-listed.
func TestProviderChangeNotifierListsOnCallback(t *testing.T) {
	rt := newRT(t, agenttools.Options{RelistInterval: time.Second})
	clk := newClock()
	agenttools.SetClock(rt, clk.now)
	p := &notifyingListing{listing: &listing{id: "feed"}}
	p.set("one")
	other := &listing{id: "shop"}
	other.set("one")
	must(t, rt.AddProvider(p))
	must(t, rt.AddProvider(other))
	start(t, rt)
	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()

	callOK(t, s, "feed_one")
	base, otherBase := p.lists.Load(), other.lists.Load()
	for range 10 {
		clk.advance(time.Hour) // far past the interval: it does not apply
		callOK(t, s, "feed_one")
		callOK(t, s, "shop_one")
	}
	if got := p.lists.Load() - base; got != 0 {
		t.Fatalf("calls without a change listed the provider %d times, want 0", got)
	}
	if got := other.lists.Load() - otherBase; got != 10 {
		t.Fatalf("the provider without ChangeNotifier was listed %d times over 10 intervals, want 10", got)
	}

	for i := range 3 {
		p.set("one", fmt.Sprintf("new_%d", i))
		p.fire()
		if got := p.lists.Load() - base; got != int32(i+1) {
			t.Fatalf("after %d callbacks the provider was listed %d times, want %d", i+1, got, i+1)
		}
		want := []string{fmt.Sprintf("feed_new_%d", i), "feed_one"}
		if got := listed(t, s, "feed"); !slices.Equal(got, want) {
			t.Fatalf("after the callback the catalog is %v, want %v", got, want)
		}
		for range 5 {
			callOK(t, s, "feed_one")
		}
		if got := p.lists.Load() - base; got != int32(i+1) {
			t.Fatalf("calls after callback %d listed the provider again: %d lists", i+1, got)
		}
	}
}

// TestProviderFreshnessRace: calls, changes, callbacks and a moving clock
// at once (run with -race): every call answers, and the last change is
// served once the callbacks stop.
func TestProviderFreshnessRace(t *testing.T) {
	rt := newRT(t, agenttools.Options{RelistInterval: time.Millisecond})
	clk := newClock()
	agenttools.SetClock(rt, clk.now)
	plain := &listing{id: "shop"}
	plain.set("one")
	feed := &notifyingListing{listing: &listing{id: "feed"}}
	feed.set("one")
	must(t, rt.AddProvider(plain))
	must(t, rt.AddProvider(feed))
	start(t, rt)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := rt.NewSession(agenttools.SessionOptions{})
			defer s.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, name := range []string{"shop_one", "feed_one"} {
					if _, err := s.Call(context.Background(), name, nil); err != nil {
						t.Error(name, err)
						return
					}
				}
			}
		}()
	}
	for i := range 50 {
		extra := fmt.Sprintf("x_%d", i)
		plain.set("one", extra)
		feed.set("one", extra)
		feed.fire()
		clk.advance(time.Millisecond)
	}
	close(stop)
	wg.Wait()

	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()
	callOK(t, s, "shop_one")
	if got := listed(t, s, "feed"); !slices.Equal(got, []string{"feed_one", "feed_x_49"}) {
		t.Errorf("feed's catalog after the last callback: %v", got)
	}
	if got := listed(t, s, "shop"); !slices.Equal(got, []string{"shop_one", "shop_x_49"}) {
		t.Errorf("shop's catalog after the interval: %v", got)
	}
}

// schemaSwap lists one tool whose input schema the test replaces.
type schemaSwap struct {
	mu     sync.Mutex
	schema *jsonschema.Schema
}

func (p *schemaSwap) Info() agenttools.ProviderInfo {
	return agenttools.ProviderInfo{ID: "swap", Description: "A tool whose schema changes."}
}

func (p *schemaSwap) Tools(context.Context) ([]*agenttools.Tool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return []*agenttools.Tool{{Action: "set", Description: "Set n.", InputSchema: p.schema, ReadOnly: true}}, nil
}

func (p *schemaSwap) Call(context.Context, *agenttools.CallInfo, json.RawMessage) (*agenttools.Result, error) {
	return &agenttools.Result{Text: "set"}, nil
}

// TestProviderNewSchemaValue: schemas are encoded once per value, and a new
// value is encoded and validated against at the next listing.
func TestProviderNewSchemaValue(t *testing.T) {
	rt := newRT(t, agenttools.Options{RelistInterval: -1})
	typed := func(typ string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Required: []string{"n"}, Properties: map[string]*jsonschema.Schema{"n": {Type: typ}}}
	}
	p := &schemaSwap{schema: typed("integer")}
	must(t, rt.AddProvider(p))
	start(t, rt)
	ctx := context.Background()
	for range 2 {
		if _, err := rt.Call(ctx, "swap_set", map[string]any{"n": 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rt.Call(ctx, "swap_set", map[string]any{"n": "one"}); code(err) != agenttools.CodeInvalidArguments {
		t.Fatalf("a string for an integer: %v", err)
	}
	p.mu.Lock()
	p.schema = typed("string")
	p.mu.Unlock()
	if _, err := rt.Call(ctx, "swap_set", map[string]any{"n": "one"}); err != nil {
		t.Fatalf("the new schema was not taken: %v", err)
	}
}
