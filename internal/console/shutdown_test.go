package console_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/console"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/transport"
)

// TestShutdownCancelsCallsWaitingForAPerson: at shutdown, a call waiting
// for a person's approval (confirm: human, a client that cannot elicit,
// nobody at the console) runs nothing yet, so it does not hold the grace
// (10 s): it ends at once with SHUTTING_DOWN, and the tool never runs.
// Calls already running keep the grace (TestHTTPGracefulShutdown).
func TestShutdownCancelsCallsWaitingForAPerson(t *testing.T) {
	t.Run("in the console", func(t *testing.T) { shutdownWhileWaiting(t, false) })
	t.Run("in the client (elicitation)", func(t *testing.T) { shutdownWhileWaiting(t, true) })
}

// shutdownWhileWaiting starts a call that waits for a person in the
// console's queue, or (elicit) in the client's own dialog, nobody
// answering, then shuts the server down.
func shutdownWhileWaiting(t *testing.T, elicit bool) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	cfg := "mode: flat\nlocal: {enabled: false}\npolicy: {confirm: human, approvalTimeout: 1m}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	drain := transport.NewDrain()
	appr := &console.Approvals{}
	d := &demo{}
	a, err := app.New(context.Background(), app.Options{ProjectDir: dir, AuditDefault: io.Discard, Providers: []provider.Provider{d},
		Middleware: []pipeline.Middleware{drain.Middleware(), appr.Middleware()}, // as serve wires them
		Env:        func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	appr.SetPolicy(func() (bool, time.Duration) {
		return a.Config().Policy.Confirm == "human", a.Config().Policy.ApprovalTimeout.Duration
	})
	const grace = 10 * time.Second
	ho := a.HTTPOptions()
	ho.Addr, ho.Drain, ho.ShutdownGrace = "127.0.0.1:0", drain, grace
	h, err := transport.NewHTTP(ho)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln) }()

	waiting := make(chan string, 1) // the call's progress: "waiting for a person to approve …", or the question
	opts := &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			select {
			case waiting <- req.Params.Message:
			default:
			}
		}}
	if elicit {
		opts.ProgressNotificationHandler = nil
		opts.ElicitationHandler = func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			waiting <- "waiting for a person: " + req.Params.Message
			<-ctx.Done() // the person never answers
			return nil, ctx.Err()
		}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "shutdown-test", Version: "1"}, opts)
	callCtx, cancelCall := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelCall()
	var session *sdk.ClientSessionOptions
	if elicit { // elicitation needs a session: not 2026-07-28's per-request calls
		session = &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := c.Connect(callCtx, &sdk.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + transport.MCPPath, MaxRetries: -1}, session)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	wipe := ""
	for _, tl := range a.Registry().Tools("demo") {
		if tl.Name == "wipe" {
			wipe = tl.Canonical
		}
	}
	type result struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		p := &sdk.CallToolParams{Name: wipe, Arguments: map[string]any{}}
		p.SetProgressToken("wipe")
		res, err := cs.CallTool(callCtx, p)
		done <- result{res, err}
	}()
	select {
	case msg := <-waiting:
		if !strings.Contains(msg, "waiting for a person") {
			t.Fatalf("progress: %q", msg)
		}
	case r := <-done:
		t.Fatalf("the call did not wait for a person: %+v %v", r.res, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reported that it waits for a person")
	}

	began := time.Now()
	shutdown()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("the call's answer was lost: %v", r.err)
		}
		text := r.res.Content[0].(*sdk.TextContent).Text
		if !r.res.IsError || !strings.Contains(text, `"SHUTTING_DOWN"`) || !strings.Contains(text, "did not run") {
			t.Fatalf("the waiting call ended with %s", text)
		}
	case <-time.After(grace / 4):
		t.Fatalf("the call waiting for a person held the shutdown for %s (grace %s)", time.Since(began), grace)
	}
	if n := d.wiped.Load(); n != 0 {
		t.Fatalf("the tool ran %d times", n)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(grace / 2):
		t.Fatalf("Serve still shutting down after %s", time.Since(began))
	}
	if l, err := appr.List(context.Background()); err != nil || len(l) != 0 { // the console's: withdrawn
		t.Fatalf("the approval is still listed: %v %v", l, err)
	}
}
