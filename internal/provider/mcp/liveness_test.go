package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/redact"
)

// An upstream whose read loop blocks (process alive) used to time out every
// later call, forever, with the same pid. Now the timed-out call triggers a
// ping; the unanswered ping recycles the process, and the next call works.
func TestHungUpstreamIsRecycled(t *testing.T) {
	o, dir := stdioOptions(t, "raw")
	o.PingTimeout = 300 * time.Millisecond
	p := newProvider(t, o)
	if res := mustCall(t, p, "echo", `{}`); res.Text != "ok echo" {
		t.Fatalf("echo: %+v", res)
	}
	// A call in flight with a long deadline: it must end with
	// PROVIDER_UNAVAILABLE when the upstream is recycled, not hang 30s.
	inflight := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := p.Call(ctx, catalog.Tool{Name: "echo"}, json.RawMessage(`{}`))
		inflight <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := p.Call(ctx, catalog.Tool{Name: "hang"}, json.RawMessage(`{}`))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(begin) > 3*time.Second {
		t.Fatalf("hung call: %v after %s", err, time.Since(begin))
	}
	select {
	case err := <-inflight:
		// Either it was answered before the hang, or it is failed by the recycling.
		if err != nil {
			wantUnavailable(t, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call in flight on the hung upstream was never answered")
	}
	eventually(t, "the hung upstream to be restarted", func() bool { return starts(dir) >= 2 })
	eventually(t, "calls to work again", func() bool {
		res, err := call(t, p, "echo", `{}`)
		return err == nil && res.Text == "ok echo"
	})
	if d := diag(p, "upstream"); !strings.Contains(strings.Join(p.problems, "\n"), "stopped answering") {
		t.Errorf("the recycling is not reported: %+v %v", d, p.problems)
	}
}

// A slow tool on a healthy upstream times out, but the ping is answered:
// the upstream is not restarted.
func TestSlowCallDoesNotRecycle(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	o.PingTimeout = 2 * time.Second
	p := newProvider(t, o)
	mustCall(t, p, "echo", `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := p.Call(ctx, catalog.Tool{Name: "slow"}, json.RawMessage(`{"ms":20000}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow: %v", err)
	}
	// The probe runs in the background; wait for it to finish.
	eventually(t, "the probe to finish", func() bool {
		p.mu.Lock()
		s := p.sess
		p.mu.Unlock()
		return s != nil && !s.probing.Load()
	})
	if res := mustCall(t, p, "echo", `{"text":"alive"}`); res.Text != "alive" || starts(dir) != 1 {
		t.Errorf("after the slow call: %+v, starts %d", res, starts(dir))
	}
}

// The Go HTTP client quotes the whole URL in its errors: the userinfo, the
// query and ${VAR} path segments must not reach the result, doctor or logs.
func TestURLSecretsNeverInErrors(t *testing.T) {
	redact.Add("MCP_SEG", "path-secret-9f8e7d")
	o := httpOptions(t, "http://user:pw-secret-1a2b3c@127.0.0.1:1/mcp/path-secret-9f8e7d?key=query-secret-4d5e6f")
	o.StartTimeout = 2 * time.Second
	p := newProvider(t, o)
	_, err := call(t, p, "echo", `{}`)
	wantUnavailable(t, err)
	texts := []string{err.Error(), diag(p, "upstream").Reason}
	for _, d := range p.Diagnostics() {
		texts = append(texts, d.Reason)
	}
	for _, txt := range texts {
		for _, sec := range []string{"pw-secret-1a2b3c", "path-secret-9f8e7d", "query-secret-4d5e6f"} {
			if strings.Contains(txt, sec) {
				t.Errorf("%q leaks %s", txt, sec)
			}
		}
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("the error should still name the endpoint: %v", err)
	}
}
