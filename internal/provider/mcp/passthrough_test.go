package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	if n := starts(dir); n != 1 || !neverStarted(p2) {
		t.Errorf("starts = %d, started %v: the cache must answer without starting the upstream", n, !neverStarted(p2))
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

// openBound opens a passthrough session (log level debug) with the given log
// handler and returns the binding of calls to it.
func openBound(t *testing.T, p *Provider, log func(context.Context, *sdk.LoggingMessageRequest)) provider.Values {
	t.Helper()
	ctx := context.Background()
	cs, err := p.OpenSession(ctx, &sdk.ClientOptions{LoggingMessageHandler: log}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	return provider.Values{Forward: &provider.Forward{Provider: p.opts.ID, Session: func(context.Context) (*sdk.ClientSession, error) { return cs, nil }}}
}

// The wait has no timer of its own: a handler slower than any such timer
// (here: blocked until the test lets it go) still finishes before the call
// returns. Over stdio and over Streamable HTTP.
func TestBoundCallWaitsForBlockedHandler(t *testing.T) {
	ts, _ := httpUpstream(t, nil)
	for name, o := range map[string]Options{"stdio": func() Options { o, _ := stdioOptions(t, "sdk"); return o }(), "http": httpOptions(t, ts.URL)} {
		t.Run(name, func(t *testing.T) {
			p := newProvider(t, o)
			entered, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			var handled atomic.Int32
			bound := openBound(t, p, func(context.Context, *sdk.LoggingMessageRequest) {
				once.Do(func() { close(entered); <-release }) // the first message blocks the relay
				handled.Add(1)
			})
			returned := make(chan error, 1)
			go func() {
				_, err := p.CallValues(context.Background(), catalog.Tool{Provider: p.opts.ID, Name: "logs"}, []byte(`{"n":5}`), bound)
				returned <- err
			}()
			<-entered
			// No event says "the call is waiting and will go on waiting": a
			// return within this time (longer than the bound the wait once
			// had) is the failure.
			select {
			case err := <-returned:
				close(release) // else Close waits for the handler
				t.Fatalf("the call returned (%v) while the first of its earlier log messages was still being handled", err)
			case <-time.After(1500 * time.Millisecond):
			}
			close(release)
			if err := <-returned; err != nil {
				t.Fatal(err)
			}
			if n := handled.Load(); n != 5 {
				t.Errorf("the call returned with %d of the 5 earlier log messages handled", n)
			}
		})
	}
}

// Notifications the SDK never hands to a handler (notifications/cancelled,
// an unknown method, params it cannot decode) do not hold the call: it
// returns once the one handled is, long before its deadline.
func TestBoundCallNotHeldByUnhandledNotifications(t *testing.T) {
	o, _ := stdioOptions(t, "raw")
	p := newProvider(t, o)
	var logs []string
	var mu sync.Mutex
	cs, err := p.OpenSession(context.Background(), &sdk.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
		time.Sleep(20 * time.Millisecond) // a slow relay
		mu.Lock()
		logs = append(logs, fmt.Sprint(r.Params.Data))
		mu.Unlock()
	}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bound := provider.Values{Forward: &provider.Forward{Provider: p.opts.ID, Session: func(context.Context) (*sdk.ClientSession, error) { return cs, nil }}}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res, err := p.CallValues(ctx, catalog.Tool{Provider: p.opts.ID, Name: "notes"}, nil, bound)
	if err != nil || res.Text != "ok notes" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if ctx.Err() != nil {
		t.Fatal("the call was held until its deadline by notifications no handler ever sees")
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(logs, []string{"kept"}) {
		t.Errorf("log messages handled before the call returned: %q, want [kept]", logs)
	}
}

// sseNotes puts a barrier event after each notification event of a call's
// stream (not after a request or the answer, none after the answer), events
// split across reads and CRLF line ends included; the SDK reads the stream
// as before, with the barriers in it.
func TestSSENotesPutsBarriersAfterNotifications(t *testing.T) {
	n := newNoteOrder()
	note := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n"
	stream := "event: message\n" + note +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\r\n" +
		"data: \"params\":{\"progressToken\":\"t\",\"progress\":1}}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"note\":\"notifications/x\"}}\n\n" +
		note // after the answer: the SDK reads no further
	w := &noteWait{}
	r := &sseNotes{ReadCloser: io.NopCloser(strings.NewReader(stream)), notes: n, wait: w}
	var out strings.Builder
	buf := make([]byte, 7) // events split across reads
	for {
		k, err := r.Read(buf)
		out.Write(buf[:k])
		if err != nil {
			break
		}
	}
	got := out.String()
	var events []string
	for _, ev := range strings.Split(strings.ReplaceAll(got, "\r\n", "\n"), "\n\n") {
		if strings.Contains(ev, n.token) {
			events = append(events, "barrier")
		} else if i := strings.Index(ev, `"method":"`); i >= 0 {
			events = append(events, strings.SplitN(ev[i+10:], `"`, 2)[0])
		} else if strings.Contains(ev, `"result"`) {
			events = append(events, "answer")
		}
	}
	want := []string{"notifications/message", "barrier", "notifications/progress", "barrier", "sampling/createMessage", "answer", "notifications/message"}
	if !slices.Equal(events, want) {
		t.Errorf("events = %v, want %v\n%s", events, want, got)
	}
	stripped := got
	for _, id := range w.ids {
		req, _ := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/progress",
			Params: json.RawMessage(`{"progressToken":"` + n.token + fmt.Sprint(id) + `","progress":0}`)})
		stripped = strings.Replace(stripped, "data: "+string(req)+"\n\n", "", 1)
	}
	if stripped != stream {
		t.Errorf("the stream without its barriers differs:\n%q\nwant\n%q", stripped, stream)
	}
	if len(w.ids) != 2 || w.last == nil {
		t.Fatalf("the call's wait has %d barriers (last %v), want 2", len(w.ids), w.last)
	}
	// The barrier reaches the outermost middleware, which keeps it from
	// every handler and marks it reached.
	mw := n.middleware(func(context.Context, string, sdk.Request) (sdk.Result, error) {
		t.Error("a barrier reached a handler")
		return nil, nil
	})
	for _, ev := range strings.Split(strings.ReplaceAll(got, "\r\n", "\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || !strings.Contains(data, n.token) {
			continue
		}
		var p sdk.ProgressNotificationParams
		msg, err := jsonrpc.DecodeMessage([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(msg.(*jsonrpc.Request).Params, &p); err != nil {
			t.Fatal(err)
		}
		if _, err := mw(context.Background(), "notifications/progress", &sdk.ClientRequest[*sdk.ProgressNotificationParams]{Params: &p}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-w.last:
	default:
		t.Error("the last barrier is not marked reached")
	}
	n.drain(context.Background(), w) // returns at once
	if len(n.waiting) != 0 {
		t.Errorf("barriers left waiting: %d", len(n.waiting))
	}
}
