package mcp

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func promptNames(ps []*sdk.Prompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// The upstream's prompts and initialize result are kept with the tool list:
// live once it runs, from the disk cache before it does.
func TestUpstreamPromptsAndInitCached(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	ctx := context.Background()
	p1 := newProvider(t, o)
	if p1.UpstreamPrompts() != nil {
		t.Fatal("prompts known before anything ran or was cached")
	}
	if _, err := p1.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if got := promptNames(p1.UpstreamPrompts()); !slices.Equal(got, []string{"hello"}) {
		t.Fatalf("prompts = %v", got)
	}
	init := p1.UpstreamInit(ctx)
	if init == nil || init.Instructions != "Test server instructions." || init.Capabilities.Prompts == nil {
		t.Fatalf("init = %+v", init)
	}
	p1.Close()

	p2 := newProvider(t, o)
	if err := p2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := promptNames(p2.UpstreamPrompts()); !slices.Equal(got, []string{"hello"}) {
		t.Errorf("cached prompts = %v", got)
	}
	if init := p2.UpstreamInit(ctx); init == nil || init.Instructions != "Test server instructions." {
		t.Errorf("cached init = %+v", init)
	}
	time.Sleep(50 * time.Millisecond)
	if n := starts(dir); n != 1 {
		t.Errorf("starts = %d: the cache must answer without starting the upstream", n)
	}
}

func TestUpstreamPromptListChanged(t *testing.T) {
	o, _ := stdioOptions(t, "sdk")
	var changes atomic.Int32
	o.OnChange = func() { changes.Add(1) }
	p := newProvider(t, o)
	if _, err := p.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := changes.Load()
	mustCall(t, p, "addprompt", `{}`)
	eventually(t, "the new prompt", func() bool {
		return slices.Equal(promptNames(p.UpstreamPrompts()), []string{"extra", "hello"})
	})
	eventually(t, "OnChange", func() bool { return changes.Load() > before })
}

// A passthrough session is a separate upstream (its own process) with the
// caller's handlers; a call bound to it runs there, hands over the raw
// result and carries the given _meta; closing it ends the process.
func TestOpenSessionAndBindCall(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	ctx := context.Background()
	p := newProvider(t, o)
	shared := mustCall(t, p, "pids", `{}`)
	sharedPid := strings.Fields(shared.Text)[0]

	opts := &sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Role: "assistant", Model: "m", Content: &sdk.TextContent{Text: "sampled"}}, nil
		},
	}
	var setupCalled bool
	cs, err := p.OpenSession(ctx, opts, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, func(*sdk.Client) { setupCalled = true })
	if err != nil {
		t.Fatal(err)
	}
	if !setupCalled || starts(dir) != 2 {
		t.Fatalf("setup called %v, starts %d: want a second upstream process", setupCalled, starts(dir))
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("protocol = %s, want the one asked for", v)
	}

	var raw *sdk.CallToolResult
	bound := provider.Values{Forward: &provider.Forward{Provider: p.opts.ID, Session: func(context.Context) (*sdk.ClientSession, error) { return cs, nil },
		Meta: sdk.Meta{"progressToken": "tok-1"}, Raw: func(r *sdk.CallToolResult) { raw = r }}}
	res, err := p.CallValues(ctx, catalog.Tool{Provider: "ev", Name: "ask"}, nil, bound)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "sampled token=tok-1 pid=") || strings.HasSuffix(res.Text, "pid="+sharedPid) {
		t.Errorf("bound call = %q: want it answered by the passthrough session's process (not %s)", res.Text, sharedPid)
	}
	if raw == nil || len(raw.Content) != 1 {
		t.Errorf("raw result = %+v", raw)
	}
	// Another provider's binding is ignored: the call runs on the shared session.
	foreign := provider.Values{Forward: &provider.Forward{Provider: "another", Session: func(context.Context) (*sdk.ClientSession, error) { return cs, nil },
		Meta: sdk.Meta{"progressToken": "tok-2"}}}
	if res, err := p.CallValues(ctx, catalog.Tool{Provider: "ev", Name: "pids"}, []byte(`{}`), foreign); err != nil || strings.Fields(res.Text)[0] != sharedPid {
		t.Errorf("a binding made for another provider was used: %+v, %v", res, err)
	}

	pid := strings.TrimPrefix(res.Text[strings.LastIndex(res.Text, "pid="):], "pid=")
	var n int
	if _, err := fmt.Sscan(pid, &n); err != nil {
		t.Fatalf("no pid in %q: %v", res.Text, err)
	}
	cs.Close()
	eventually(t, "the passthrough process to exit", func() bool { return !alive(n) })
	_, err = p.CallValues(ctx, catalog.Tool{Provider: "ev", Name: "echo"}, nil, bound)
	wantUnavailable(t, err)

	// Close ends the passthrough sessions still open.
	cs2, err := p.OpenSession(ctx, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	done := make(chan struct{})
	go func() { _ = cs2.Wait(); close(done) }() // Wait's error is how the session ended; the test only needs that it did
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close left a passthrough session open")
	}
	if _, err := p.OpenSession(ctx, nil, nil, nil); err == nil {
		t.Error("OpenSession after Close succeeded")
	}
}

func TestOpenSessionFailsClearly(t *testing.T) {
	o, _ := stdioOptions(t, "exit")
	p := newProvider(t, o)
	_, err := p.OpenSession(context.Background(), nil, nil, nil)
	te := wantCode(t, err, toolerr.ProviderUnavailable)
	if !strings.Contains(te.Message, "passthrough session") {
		t.Errorf("message = %q", te.Message)
	}
}

// A bound call returns only once the notifications the upstream sent before
// its answer have been handled (relayed), however slow the handler.
func TestBoundCallWaitsForEarlierNotifications(t *testing.T) {
	o, _ := stdioOptions(t, "sdk")
	ctx := context.Background()
	p := newProvider(t, o)
	var handled atomic.Int32
	opts := &sdk.ClientOptions{LoggingMessageHandler: func(context.Context, *sdk.LoggingMessageRequest) {
		time.Sleep(20 * time.Millisecond) // a slow relay
		handled.Add(1)
	}}
	cs, err := p.OpenSession(ctx, opts, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	bound := provider.Values{Forward: &provider.Forward{Provider: p.opts.ID, Session: func(context.Context) (*sdk.ClientSession, error) { return cs, nil }}}
	if _, err := p.CallValues(ctx, catalog.Tool{Provider: "ev", Name: "logs"}, []byte(`{"n":5}`), bound); err != nil {
		t.Fatal(err)
	}
	if n := handled.Load(); n != 5 {
		t.Errorf("the call returned with %d of the 5 earlier log messages handled", n)
	}
}

func TestSSENotesCountsNotifications(t *testing.T) {
	n := newNoteCounter()
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\r\n" +
		"data: \"params\":{\"progressToken\":\"t\",\"progress\":1}}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"note\":\"notifications/x\"}}\n\n"
	r := &sseNotes{ReadCloser: io.NopCloser(strings.NewReader(stream)), notes: n}
	buf := make([]byte, 7) // events split across reads
	for {
		if _, err := r.Read(buf); err != nil {
			break
		}
	}
	if got := n.read.Load(); got != 2 {
		t.Errorf("notifications counted = %d, want 2 (not the request, not the response)", got)
	}
}
