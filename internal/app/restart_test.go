package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/status"
)

// Restart through the app: a real HTTP upstream whose sessions after the
// restart offer another tool, so a restart changes the list and every
// session is told list_changed; the count and the state follow.
func TestRestartUpstream(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var gen atomic.Int32 // the tool a new session offers
	gen.Store(1)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server {
		n := gen.Load()
		up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
		sdk.AddTool(up, &sdk.Tool{Name: fmt.Sprintf("gen%d", n), Description: "Which session."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
			})
		return up
	}, nil))
	defer ts.Close()
	dir := t.TempDir()
	cfg := "mode: flat\nlocal: {enabled: false}\naudit: {path: \"off\"}\nproviders:\n" +
		"  - {id: up, kind: mcp, url: " + ts.URL + "}\n" +
		"  - {id: off, kind: mcp, enabled: false, url: " + ts.URL + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := New(ctx, Options{ProjectDir: dir, AuditDefault: io.Discard, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	changed := make(chan struct{}, 16)
	a.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	st := stateOf(t, a, "up")
	if st.State != status.StateReady || st.Restarts != 0 || !st.Restartable || st.Tools != 1 {
		t.Fatalf("before: %+v", st)
	}
	if _, ok := a.Registry().Lookup("up_gen1"); !ok {
		t.Fatalf("no up_gen1 in %v", a.Registry().Names())
	}
	for len(changed) > 0 { // only what the restart causes counts below
		<-changed
	}
	gen.Store(2)
	if err := a.Restart(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	// Restart returns with the catalog current and the sessions told.
	if _, ok := a.Registry().Lookup("up_gen2"); !ok {
		t.Fatalf("after the restart the tools are %v", a.Registry().Names())
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after the tools changed")
	}
	st = stateOf(t, a, "up")
	if st.State != status.StateReady || st.Restarts != 1 {
		t.Errorf("after: %+v", st)
	}

	for _, c := range []struct {
		id   string
		want error
	}{{"nope", status.ErrUnknownProvider}, {"builtin", status.ErrNotRestartable}, {"off", status.ErrDisabled}} {
		if err := a.Restart(ctx, c.id); !errors.Is(err, c.want) {
			t.Errorf("Restart(%s) = %v, want %v", c.id, err, c.want)
		}
	}
	if st := stateOf(t, a, "off"); st.State != status.StateDisabled {
		t.Errorf("off: %+v", st)
	}
}

func stateOf(t *testing.T, a *App, id string) status.ProviderState {
	t.Helper()
	for _, p := range a.Status().Providers {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no provider %q in the status", id)
	return status.ProviderState{}
}

// lifeProvider is an upstream-like provider whose start the test drives.
type lifeProvider struct {
	mu       sync.Mutex
	life     provider.LifecycleState
	started  bool
	restarts int
	err      error
}

func (*lifeProvider) Info() catalog.ProviderInfo {
	return catalog.ProviderInfo{ID: "slow", Kind: "test", Description: "A slow upstream."}
}

func (l *lifeProvider) Tools(context.Context) ([]catalog.Tool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, l.err
	}
	if !l.started {
		return nil, fmt.Errorf("slow: %w", provider.ErrStarting)
	}
	return []catalog.Tool{{Provider: "slow", Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (*lifeProvider) Call(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
	return &provider.Result{Text: "ok"}, nil
}

func (l *lifeProvider) Lifecycle() provider.LifecycleState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.life
}

func (l *lifeProvider) Restarts() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.restarts
}

func (l *lifeProvider) set(f func(*lifeProvider)) {
	l.mu.Lock()
	f(l)
	l.mu.Unlock()
}

var (
	_ provider.Lifecycle      = (*lifeProvider)(nil)
	_ provider.RestartCounter = (*lifeProvider)(nil)
)

// The state model: a provider whose first start has not completed is
// "starting" (not "ready" with 0 tools, not "failed"); then ready; a
// failure is "failed" with the reason, scrubbed; the last error stays after
// a recovery; a provider without Restarter is not restartable.
func TestProviderStates(t *testing.T) {
	redact.Add("AT_STATE_SECRET", "s3cr3t-state-value")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte("mode: flat\nlocal: {enabled: false}\naudit: {path: \"off\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &lifeProvider{life: provider.LifecycleState{Starting: true}}
	ctx := context.Background()
	a, err := New(ctx, Options{ProjectDir: dir, AuditDefault: io.Discard, Providers: []provider.Provider{l},
		Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	refresh := func() { a.Registry().Refresh(provider.WithRescan(ctx)) }

	st := stateOf(t, a, "slow")
	if st.State != status.StateStarting || st.LastError != "" || st.Reason != "" || st.Restartable {
		t.Fatalf("slow start: %+v", st)
	}
	// The provider no longer says it is starting, but it was never listed: still starting.
	l.set(func(l *lifeProvider) { l.life = provider.LifecycleState{} })
	if st := stateOf(t, a, "slow"); st.State != status.StateStarting {
		t.Fatalf("not listed yet: %+v", st)
	}
	l.set(func(l *lifeProvider) { l.started = true })
	refresh()
	if st := stateOf(t, a, "slow"); st.State != status.StateReady || st.Tools != 1 {
		t.Fatalf("started: %+v", st)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l.set(func(l *lifeProvider) {
		l.life = provider.LifecycleState{Failed: true, LastError: "died: token s3cr3t-state-value", LastErrorAt: at}
		l.restarts = 2
	})
	st = stateOf(t, a, "slow")
	if st.State != status.StateFailed || !strings.Contains(st.Reason, "died") || st.Restarts != 2 || st.LastErrorAt == nil || !st.LastErrorAt.Equal(at) {
		t.Fatalf("failed: %+v", st)
	}
	if b, _ := json.Marshal(st); strings.Contains(string(b), "s3cr3t-state-value") {
		t.Fatalf("the status leaks a secret: %s", b)
	}
	l.set(func(l *lifeProvider) { l.life.Failed = false })
	if st := stateOf(t, a, "slow"); st.State != status.StateReady || !strings.Contains(st.LastError, "died") {
		t.Fatalf("recovered: %+v", st)
	}
	// A listing error of a provider without a lifecycle of its own.
	l.set(func(l *lifeProvider) { l.life, l.err = provider.LifecycleState{}, errors.New("listing broke") })
	refresh()
	if st := stateOf(t, a, "slow"); st.State != status.StateFailed || st.Reason != "listing broke" {
		t.Fatalf("listing error: %+v", st)
	}
	if err := a.Restart(ctx, "slow"); !errors.Is(err, status.ErrNotRestartable) {
		t.Errorf("Restart of a provider without Restarter: %v", err)
	}
}
