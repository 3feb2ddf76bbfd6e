package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Restart of a stdio upstream kills the child's whole process group, starts
// a fresh child, re-lists its tools (OnChange told when they changed) and
// counts the restart; the next call runs on the new child.
func TestRestartStdio(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	var changes atomic.Int32
	o.OnChange = func() { changes.Add(1) }
	p := newProvider(t, o)
	res := mustCall(t, p, "pids", `{}`)
	var server, grandchild int
	if _, err := fmt.Sscan(res.Text, &server, &grandchild); err != nil {
		t.Fatalf("pids = %q", res.Text)
	}
	// The first session gains a tool: the fresh one will not have it.
	mustCall(t, p, "addtool", `{}`)
	eventually(t, "the added tool", func() bool {
		tools, _ := p.Tools(context.Background())
		return slices.Contains(names(tools), "extra")
	})
	before := changes.Load()

	// A call in flight on the old process fails at once, saying why.
	inflight := make(chan error, 1)
	go func() {
		_, err := call(t, p, "slow", `{"ms":20000}`)
		inflight <- err
	}()
	eventually(t, "the slow call to reach the upstream", func() bool {
		_, err := os.Stat(filepath.Join(dir, "slow-started"))
		return err == nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	select {
	case err := <-inflight:
		if te := wantCode(t, err, toolerr.ProviderUnavailable); !strings.Contains(te.Message, "restarted by the operator") {
			t.Errorf("the call in flight: %v", te)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call in flight on the restarted upstream was never answered")
	}
	if n := p.Restarts(); n != 1 || starts(dir) != 2 {
		t.Fatalf("restarts %d, starts %d", n, starts(dir))
	}
	if alive(server) || alive(grandchild) {
		t.Errorf("the old process group survived the restart (server %v, grandchild %v)", alive(server), alive(grandchild))
	}
	if lc := p.Lifecycle(); lc.Starting || lc.Failed {
		t.Errorf("after the restart: %+v", lc)
	}
	tools, err := p.Tools(context.Background())
	if err != nil || slices.Contains(names(tools), "extra") || !slices.Equal(names(tools), sdkTools) {
		t.Errorf("tools after the restart: %v, %v", names(tools), err)
	}
	eventually(t, "OnChange after the tools changed", func() bool { return changes.Load() > before })
	res = mustCall(t, p, "pids", `{}`)
	var server2 int
	if _, err := fmt.Sscan(res.Text, &server2); err != nil || server2 == server {
		t.Errorf("after the restart the call ran on pid %d (was %d)", server2, server)
	}

	// An automatic recycle (a crash) counts too.
	_, err = call(t, p, "crash", `{}`)
	wantUnavailable(t, err)
	eventually(t, "the automatic restart", func() bool { return p.Restarts() == 2 && starts(dir) == 3 })
	if lc := p.Lifecycle(); lc.LastError == "" || lc.LastErrorAt.IsZero() {
		t.Errorf("the crash is not the last error: %+v", lc)
	}

	// Closed: Restart refuses.
	p.Close()
	if err := p.Restart(ctx); err == nil {
		t.Error("Restart after Close succeeded")
	} else {
		wantUnavailable(t, err)
	}
}

// Restart of an HTTP upstream drops the session and opens a new one.
func TestRestartHTTP(t *testing.T) {
	ts, _ := httpUpstream(t, nil)
	p := newProvider(t, httpOptions(t, ts.URL))
	mustCall(t, p, "echo", `{"text":"one"}`)
	p.mu.Lock()
	first := p.sess
	p.mu.Unlock()
	if err := p.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	n, second := p.starts, p.sess
	p.mu.Unlock()
	if n != 2 || second == first || first.ctx.Err() == nil || p.Restarts() != 1 {
		t.Fatalf("starts %d, new session %v, old one ended %v, restarts %d", n, second != first, first.ctx.Err() != nil, p.Restarts())
	}
	if res := mustCall(t, p, "echo", `{"text":"two"}`); res.Text != "two" {
		t.Errorf("after the restart: %+v", res)
	}
}

// A slow first start is "starting", not a failure: Tools says so with
// provider.ErrStarting and Lifecycle reports it, until the upstream answers.
func TestSlowStartIsStarting(t *testing.T) {
	srv := newTestServer(t.TempDir())
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	gate := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { closeOnce(gate) })
	o := httpOptions(t, ts.URL)
	o.ListWait = time.Millisecond // Tools gives up waiting at once
	p := newProvider(t, o)
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := p.Tools(context.Background())
	if !errors.Is(err, provider.ErrStarting) {
		t.Fatalf("Tools during a slow start: %v", err)
	}
	if lc := p.Lifecycle(); !lc.Starting || lc.Failed {
		t.Errorf("during a slow start: %+v", lc)
	}
	closeOnce(gate)
	eventually(t, "the upstream to answer", func() bool {
		tools, err := p.Tools(context.Background())
		return err == nil && len(tools) > 0
	})
	if lc := p.Lifecycle(); lc.Starting || lc.Failed || lc.LastError != "" {
		t.Errorf("after the start: %+v", lc)
	}
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}
