package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// slowStart is an upstream whose first start ends when ready is closed.
type slowStart struct {
	ready    chan struct{}
	mu       sync.Mutex
	onChange func()
}

func (*slowStart) Info() catalog.ProviderInfo { return catalog.ProviderInfo{ID: "slow", Kind: "mcp"} }
func (s *slowStart) Tools(context.Context) ([]catalog.Tool, error) {
	select {
	case <-s.ready:
		return []catalog.Tool{{Provider: "slow", Name: "hello", Description: "Says hello.", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
	default:
		return nil, provider.ErrStarting
	}
}
func (*slowStart) Call(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
	return &provider.Result{Text: "hello"}, nil
}
func (s *slowStart) Bind(_ *slog.Logger, onChange func()) {
	s.mu.Lock()
	s.onChange = onChange
	s.mu.Unlock()
}
func (s *slowStart) finish() {
	close(s.ready)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.onChange != nil {
		s.onChange()
	}
}

// TestWaitStarted: the one-shot commands wait for a provider still
// starting, see its tools once it is ready, and name one that never is.
func TestWaitStarted(t *testing.T) {
	s := &slowStart{ready: make(chan struct{})}
	a, err := app.New(context.Background(), app.Options{ProjectDir: t.TempDir(), AuditDefault: io.Discard, Providers: []provider.Provider{s}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := a.Starting(); len(got) != 1 || got[0] != "slow" {
		t.Fatalf("Starting = %v", got)
	}
	// Never ready within the bound: named, after about that long.
	begin := time.Now()
	if never := a.WaitStarted(context.Background(), 100*time.Millisecond, nil); len(never) != 1 {
		t.Fatalf("never ready = %v", never)
	}
	if d := time.Since(begin); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("waited %s for a 100ms bound", d)
	}
	// Ready during the wait: progress was reported, the tools are listed.
	var calls int
	never := a.WaitStarted(context.Background(), time.Minute, func(ids []string, _ time.Duration) {
		if calls++; calls == 1 {
			s.finish()
		}
	})
	if len(never) != 0 || calls == 0 {
		t.Fatalf("never ready = %v after %d progress calls", never, calls)
	}
	if _, ok := a.Registry().Lookup("slow_hello"); !ok {
		t.Errorf("the tools of the provider that became ready are not listed: %v", a.Registry().Tools(""))
	}
}
