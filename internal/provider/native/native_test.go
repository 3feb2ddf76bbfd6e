package native

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

func ok(context.Context, json.RawMessage) (*provider.Result, error) {
	return &provider.Result{Text: "ok"}, nil
}

func newP(t *testing.T) *Provider {
	t.Helper()
	p, err := New(catalog.ProviderInfo{ID: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "booking", want: "booking"},
		{in: "ai-agents", want: "ai_agents"},
		{in: "core", want: "core"},
		{in: "", bad: true},
		{in: "Booking", bad: true},
		{in: "1x", bad: true},
		{in: "a__b", bad: true},
		{in: "a_", bad: true},
		{in: "a.b", bad: true},
		{in: "a b", bad: true},
		{in: "é", bad: true},
		{in: strings.Repeat("a", 65), bad: true},
	} {
		got, err := Normalize(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrInvalidName) {
				t.Errorf("Normalize(%q) = %q, %v; want ErrInvalidName", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestAddRejectsBadTools(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool Tool
		want error
		msg  string
	}{
		{"camel case", Tool{Name: "checkAvailability", Description: "d", Handler: ok}, ErrInvalidName, "snake_case"},
		{"dash", Tool{Name: "check-availability", Description: "d", Handler: ok}, ErrInvalidName, "snake_case"},
		{"empty", Tool{Name: "", Description: "d", Handler: ok}, ErrInvalidName, "snake_case"},
		{"array schema", Tool{Name: "a", Description: "d", Handler: ok, InputSchema: json.RawMessage(`{"type":"array"}`)}, ErrBadSchema, `"array"`},
		{"not json", Tool{Name: "a", Description: "d", Handler: ok, InputSchema: json.RawMessage(`{`)}, ErrBadSchema, "JSON object"},
		{"schema is a string", Tool{Name: "a", Description: "d", Handler: ok, InputSchema: json.RawMessage(`"object"`)}, ErrBadSchema, "JSON object"},
		{"type list", Tool{Name: "a", Description: "d", Handler: ok, InputSchema: json.RawMessage(`{"type":["object","null"]}`)}, ErrBadSchema, "must be"},
		{"output not object", Tool{Name: "a", Description: "d", Handler: ok, OutputSchema: json.RawMessage(`{"type":"string"}`)}, ErrBadSchema, "output"},
		{"no handler", Tool{Name: "a", Description: "d"}, nil, "nil handler"},
		{"no description", Tool{Name: "a", Handler: ok}, nil, "description"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newP(t).Add(tc.tool)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Add = %v; want %v mentioning %q", err, tc.want, tc.msg)
			}
		})
	}
}

func TestAddDuplicateAndDefaults(t *testing.T) {
	p := newP(t)
	if err := p.Add(Tool{Name: "b", Description: "d", Handler: ok}); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(Tool{Name: "a", Description: "d", Handler: ok, InputSchema: json.RawMessage(`{"properties":{}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(Tool{Name: "b", Description: "again", Handler: ok}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
	tools, _ := p.Tools(context.Background())
	if len(tools) != 2 || tools[0].Name != "svc_a" || tools[1].Name != "svc_b" {
		t.Fatalf("tools = %+v", tools)
	}
	if !strings.Contains(string(tools[0].InputSchema), `"type":"object"`) || string(tools[1].InputSchema) != `{"type":"object","properties":{}}` {
		t.Errorf("schemas: %s / %s", tools[0].InputSchema, tools[1].InputSchema)
	}
	again, _ := p.Tools(context.Background())
	if &again[0] != &tools[0] {
		t.Error("Tools must hand back the same slice while nothing changed (cheap refresh)")
	}
}

func TestAddAfterBindNotifies(t *testing.T) {
	p := newP(t)
	n := 0
	p.Bind(nil, func() { n++ })
	if err := p.Add(Tool{Name: "a", Description: "d", Handler: ok}); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("onChange ran %d times, want 1", n)
	}
}

func TestCallRecoversPanics(t *testing.T) {
	p := newP(t)
	if err := p.Add(Tool{Name: "boom", Description: "d", Handler: func(context.Context, json.RawMessage) (*provider.Result, error) {
		panic("secret-value-42")
	}}); err != nil {
		t.Fatal(err)
	}
	_, err := p.Call(context.Background(), catalog.Tool{Name: "svc_boom"}, nil)
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "secret-value-42" || len(pe.Stack) == 0 {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "secret-value-42") {
		t.Error("the panic value must not reach the model")
	}
}

func TestCallAnswersWhenTheHandlerIgnoresCancellation(t *testing.T) {
	p := newP(t)
	release := make(chan struct{})
	defer close(release)
	if err := p.Add(Tool{Name: "stuck", Description: "d", Handler: func(context.Context, json.RawMessage) (*provider.Result, error) {
		<-release // ignores ctx
		return &provider.Result{Text: "late"}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := p.Call(ctx, catalog.Tool{Name: "svc_stuck"}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
}

func TestConcurrentAddAndCall(t *testing.T) {
	p := newP(t)
	if err := p.Add(Tool{Name: "a", Description: "d", Handler: ok}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := p.Add(Tool{Name: "t" + string(rune('a'+i)), Description: "d", Handler: ok}); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if r, err := p.Call(context.Background(), catalog.Tool{Name: "svc_a"}, nil); err != nil || r.Text != "ok" {
				t.Errorf("call: %v %v", r, err)
			}
			if _, err := p.Tools(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if tools, _ := p.Tools(context.Background()); len(tools) != 9 {
		t.Fatalf("%d tools, want 9", len(tools))
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"booking", "ai-agents", "A", "a__b", "", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 256 {
			return
		}
		got, err := Normalize(s)
		if err != nil {
			return
		}
		if !snake.MatchString(got) || got != strings.ReplaceAll(s, "-", "_") {
			t.Fatalf("Normalize(%q) = %q", s, got)
		}
	})
}

// src is a Source with every optional phase, counting them.
type src struct {
	tools          []Tool
	starts, closes int
	bound          func()
}

func (s *src) Tools(context.Context) ([]Tool, error) { return s.tools, nil }
func (s *src) Start(context.Context) error           { s.starts++; return nil }
func (s *src) Close() error                          { s.closes++; return nil }
func (s *src) Bind(_ *slog.Logger, onChange func())  { s.bound = onChange }

var (
	_ Source            = (*src)(nil)
	_ provider.Starter  = (*src)(nil)
	_ provider.Closer   = (*src)(nil)
	_ provider.Notifier = (*src)(nil)
)

// TestSourceListing: a source's tools are checked as Add checks them, at
// every listing, and a call reaches the handler of the latest listing.
func TestSourceListing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tools []Tool
		want  string // "" for a good listing
	}{
		{"good", []Tool{{Name: "b", Description: "B.", Handler: ok}, {Name: "a", Description: "A.", Handler: ok}}, ""},
		{"bad name", []Tool{{Name: "B", Description: "B.", Handler: ok}}, "snake_case"},
		{"no handler", []Tool{{Name: "b", Description: "B."}}, "nil handler"},
		{"no description", []Tool{{Name: "b", Handler: ok}}, "description"},
		{"duplicate", []Tool{{Name: "b", Description: "B.", Handler: ok}, {Name: "b", Description: "B.", Handler: ok}}, "listed twice"},
		{"array schema", []Tool{{Name: "b", Description: "B.", InputSchema: json.RawMessage(`{"type":"array"}`), Handler: ok}}, "object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewSource(catalog.ProviderInfo{ID: "svc"}, &src{tools: tc.tools})
			if err != nil {
				t.Fatal(err)
			}
			tools, err := p.Tools(context.Background())
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil || len(tools) != 2 || tools[0].Name != "svc_a" || tools[1].Name != "svc_b" {
				t.Fatalf("tools = %+v, %v", tools, err)
			}
			res, err := p.Call(context.Background(), tools[0], nil)
			if err != nil || res.Text != "ok" {
				t.Errorf("call = %v, %v", res, err)
			}
		})
	}
}

// TestSourcePhases: Start reaches the source once however often the runtime
// runs start phases (once per config reload), Close and Bind reach it, and
// Add is refused.
func TestSourcePhases(t *testing.T) {
	s := &src{}
	p, err := NewSource(catalog.ProviderInfo{ID: "svc"}, s)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := p.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	p.Bind(nil, func() {})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s.starts != 1 || s.closes != 1 || s.bound == nil {
		t.Errorf("starts %d, closes %d, bound %v; want 1, 1, set", s.starts, s.closes, s.bound != nil)
	}
	if err := p.Add(Tool{Name: "x", Description: "X.", Handler: ok}); err == nil {
		t.Error("Add on a source's provider succeeded")
	}
	if _, err := NewSource(catalog.ProviderInfo{ID: "svc"}, nil); err == nil {
		t.Error("a nil source was accepted")
	}
	// A provider of registered tools has no phases of its own.
	if err := newP(t).Start(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestRegisteredFresh: registered tools are fresh from the listing that
// returned them until the next Add.
func TestRegisteredFresh(t *testing.T) {
	p := newP(t)
	if p.Fresh() {
		t.Fatal("fresh before any listing")
	}
	if err := p.Add(Tool{Name: "a", Description: "A.", Handler: ok}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !p.Fresh() {
		t.Fatal("not fresh after a listing")
	}
	if err := p.Add(Tool{Name: "b", Description: "B.", Handler: ok}); err != nil {
		t.Fatal(err)
	}
	if p.Fresh() {
		t.Fatal("fresh after an Add")
	}
	tools, _ := p.Tools(context.Background())
	if len(tools) != 2 || !p.Fresh() {
		t.Fatalf("after the next listing: %d tools, fresh %v", len(tools), p.Fresh())
	}
}

// freshSrc is a Source that says whether it is fresh.
type freshSrc struct {
	src
	fresh atomic.Bool
}

func (s *freshSrc) Fresh() bool { return s.fresh.Load() }

// TestSourceFresh: a source is as fresh as it says, and never when it
// cannot say.
func TestSourceFresh(t *testing.T) {
	tools := []Tool{{Name: "a", Description: "A.", Handler: ok}}
	plain, err := NewSource(catalog.ProviderInfo{ID: "svc"}, &src{tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if plain.Fresh() {
		t.Error("a source that is no Fresher is fresh")
	}
	s := &freshSrc{src: src{tools: tools}}
	p, err := NewSource(catalog.ProviderInfo{ID: "svc"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{true, false, true} {
		s.fresh.Store(want)
		if p.Fresh() != want {
			t.Errorf("Fresh() = %v, the source says %v", !want, want)
		}
	}
}

// TestSourceRelistUnchanged: a listing of the same tools (new handlers,
// equal schemas) hands back the same catalog slice, so the registry sees no
// change without comparing schemas; a changed tool is checked again and the
// call reaches the latest handler.
func TestSourceRelistUnchanged(t *testing.T) {
	schema := json.RawMessage(`{"properties":{"n":{"type":"integer"}}}`) // "type" is added
	answer := func(text string) Handler {
		return func(context.Context, json.RawMessage) (*provider.Result, error) {
			return &provider.Result{Text: text}, nil
		}
	}
	s := &src{tools: []Tool{{Name: "a", Description: "A.", InputSchema: schema, Handler: answer("1")}, {Name: "b", Description: "B.", Handler: ok}}}
	p, err := NewSource(catalog.ProviderInfo{ID: "svc"}, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := p.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.tools = []Tool{{Name: "b", Description: "B.", Handler: ok}, {Name: "a", Description: "A.", InputSchema: schema, Handler: answer("2")}}
	second, err := p.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if &first[0] != &second[0] {
		t.Error("an unchanged listing gave a new slice")
	}
	if res, _ := p.Call(ctx, second[0], nil); res == nil || res.Text != "2" {
		t.Errorf("the call did not reach the latest handler: %+v", res)
	}
	s.tools = []Tool{{Name: "a", Description: "A, changed.", InputSchema: schema, Handler: ok}, {Name: "b", Description: "B.", Handler: ok}}
	third, err := p.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if &third[0] == &second[0] || third[0].Description != "A, changed." || !strings.Contains(string(third[0].InputSchema), `"object"`) {
		t.Errorf("a changed tool was not taken: %+v", third[0])
	}
	s.tools = []Tool{{Name: "a", Description: "A, changed.", InputSchema: json.RawMessage(`{"type":"array"}`), Handler: ok}}
	if _, err := p.Tools(ctx); err == nil || !strings.Contains(err.Error(), "object") {
		t.Errorf("a tool whose schema became bad was not checked again: %v", err)
	}
}
