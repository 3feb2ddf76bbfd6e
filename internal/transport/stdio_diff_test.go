package transport

import (
	"bufio"
	"context"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The differential tests play the same client input, step by step, to a
// go-sdk server served through Stdio, through the Stdio of before
// (mcp.IOTransport behind a screening reader: legacyStdio) and, where the
// input has nothing the SDK's transport refuses or leaves unanswered,
// through a bare mcp.IOTransport; the output lines must be the same.
//
// Where Stdio departs from the SDK on purpose (a batch the SDK ends the
// session on, or never answers), the script says how the SDK's transport
// ends (sdkEnds), and what Stdio writes instead (own).

// A step writes lines to the server's stdin, then waits for want lines of
// output. Within a step, output lines are compared sorted (requests are
// answered concurrently); the steps keep their order.
type step struct {
	send []string
	want int
	sdk  int // in a script where the SDK ends the session: its want
}

type diffScript struct {
	name  string
	steps []step
	// bare: a bare mcp.IOTransport answers the same (no stray lines, and
	// nothing left unanswered when stdin ends).
	bare bool
	// sdkEnds: the references end the session on the last step, with this
	// error; Stdio writes own (step by step, sorted) and serves on.
	sdkEnds string
	own     [][]string
}

const (
	initOld   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	initNew   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	initedMsg = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	initedOld = `{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"logging":{},"tools":{"listChanged":true}},"protocolVersion":"2025-03-26","serverInfo":{"name":"t","version":"1"}}}` + "\n"
	initedNew = `{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"logging":{},"tools":{"listChanged":true}},"protocolVersion":"2025-06-18","serverInfo":{"name":"t","version":"1"}}}` + "\n"
	noteMsg   = `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`
)

func ping(id any) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"ping"}`, id) }

func echoCall(id any, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, id, text)
}

func batchOf(msgs ...string) string { return "[" + strings.Join(msgs, ",") + "]" }

// errLine is the line of an error response: id is JSON.
func errLine(id string, code int, msg string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}

const (
	notMessage = "invalid request: the batch element is not a JSON-RPC 2.0 message"
	idInUse    = "invalid request: id %v is already in use by another request"
)

var diffScripts = []diffScript{
	{name: "single messages", bare: true, steps: []step{
		{send: []string{initOld}, want: 1},
		{send: []string{initedMsg, `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`}, want: 1},
		{send: []string{echoCall(2, "hi <&> there"), ping(`"p"`), `{"jsonrpc":"2.0","id":3,"method":"no/such"}`}, want: 3},
		{send: []string{`{"jsonrpc":"2.0","id":99,"result":{}}`, ping(4)}, want: 1}, // a response nobody asked for is ignored
		{send: []string{ping(5) + "\r", " \t" + ping(6)}, want: 2},                  // CRLF, white space before
	}},
	{name: "batches", bare: true, steps: []step{
		{send: []string{initOld}, want: 1},
		{send: []string{initedMsg, batchOf(echoCall(2, "a"), echoCall(3, "<b&>"), ping(`"x"`))}, want: 1},
		{send: []string{batchOf(ping(4))}, want: 1},
		{send: []string{batchOf(`{"jsonrpc":"2.0","id":5,"method":"no/such"}`, echoCall(6, "c"), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`)}, want: 1},
		{send: []string{batchOf(`{"jsonrpc":"2.0","id":99,"result":{}}`), ping(8)}, want: 1}, // a batch of a response: nothing to write
		{send: []string{batchOf(ping(2), ping(3)), " " + batchOf(ping(9)) + "\r"}, want: 2},  // ids of batches answered: free again
	}},
	{name: "batch before initialize", bare: true, steps: []step{
		{send: []string{batchOf(initOld)}, want: 1},
		{send: []string{initedMsg, echoCall(1, "after")}, want: 1},
	}},
	{name: "notifications-only batch", bare: true, steps: []step{
		{send: []string{initOld}, want: 1, sdk: 1},
		{send: []string{batchOf(initedMsg), ping(1)}, want: 1, sdk: 1},
		{send: []string{batchOf(ping(2), ping(3))}, want: 1, sdk: 1},
		{send: []string{batchOf(noteMsg), ping(4)}, want: 1, sdk: 0}, // a notification is not answered
	}, sdkEnds: "batch contains previously seen request", own: [][]string{
		{initedOld}, {`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"}, {`[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"result":{}}]` + "\n"},
		{`{"jsonrpc":"2.0","id":4,"result":{}}` + "\n"},
	}},
	{name: "mixed batch", bare: true, steps: []step{
		{send: []string{initOld, initedMsg}, want: 1, sdk: 1},
		{send: []string{batchOf(ping(7), noteMsg), ping(8)}, want: 2, sdk: 1}, // the SDK never writes that batch
		{send: []string{batchOf(noteMsg, ping(9), noteMsg)}, want: 1, sdk: 0},
	}, sdkEnds: "duplicate message ID", own: [][]string{
		{initedOld}, {`[{"jsonrpc":"2.0","id":7,"result":{}}]` + "\n", `{"jsonrpc":"2.0","id":8,"result":{}}` + "\n"},
		{`[{"jsonrpc":"2.0","id":9,"result":{}}]` + "\n"},
	}},
	{name: "batch reusing an id in flight", bare: true, steps: []step{
		{send: []string{initOld, initedMsg}, want: 1, sdk: 1},
		{send: []string{batchOf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold"}}`), batchOf(ping(7), ping(8))}, want: 1, sdk: 0},
		{send: []string{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"release"}}`}, want: 2, sdk: 0},
	}, sdkEnds: "batch contains previously seen request 7", own: [][]string{
		{initedOld}, {`[` + errLine("7", -32600, fmt.Sprintf(idInUse, 7)) + `,{"jsonrpc":"2.0","id":8,"result":{}}]` + "\n"},
		{`{"jsonrpc":"2.0","id":9,"result":{"content":[]}}` + "\n", `[{"jsonrpc":"2.0","id":7,"result":{"content":[]}}]` + "\n"},
	}},
	{name: "stray lines", steps: []step{
		{send: []string{"hello, is this thing on?", initOld, "", "   ", `{"foo": 1, "id": 7}`}, want: 3},
		{send: []string{initedMsg, `{"jsonrpc":"1.0","id":"v","method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping"} trailing`, ping(2)}, want: 3},
		{send: []string{`{"jsonrpc":"2.0","method":5}`, `[1,`, `{"jsonrpc":"2.0","id":{"o":1},"method":"ping"}`, `null`, `42`, batchOf(ping(4))}, want: 6},
	}},
	{name: "empty batch", bare: true, steps: []step{
		{send: []string{initOld, initedMsg}, want: 1, sdk: 1},
		{send: []string{"[]", " [ ] ", ping(1)}, want: 3, sdk: 0},
	}, sdkEnds: "empty batch", own: [][]string{
		{initedOld}, {
			errLine("null", -32600, "invalid request: an empty batch") + "\n", errLine("null", -32600, "invalid request: an empty batch") + "\n",
			`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
		},
	}},
	{name: "duplicate ids in a batch", bare: true, steps: []step{
		{send: []string{initOld, initedMsg}, want: 1, sdk: 1},
		{send: []string{batchOf(ping(1), echoCall(1, "x"))}, want: 1, sdk: 0},
	}, sdkEnds: "duplicate message ID", own: [][]string{
		{initedOld}, {`[{"jsonrpc":"2.0","id":1,"result":{}},` + errLine("1", -32600, fmt.Sprintf(idInUse, 1)) + "]\n"},
	}},
	{name: "two notifications in a batch", bare: true, steps: []step{
		{send: []string{initOld}, want: 1, sdk: 1},
		{send: []string{batchOf(initedMsg, noteMsg), ping(1)}, want: 1, sdk: 0},
	}, sdkEnds: "duplicate message ID", own: [][]string{
		{initedOld}, {`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"},
	}},
	{name: "batch with non-messages", bare: true, steps: []step{
		{send: []string{initOld, initedMsg}, want: 1, sdk: 1},
		{send: []string{batchOf(ping(1), `{"x":1}`, `{"jsonrpc":"2.0","id":"k","method":5}`, "3")}, want: 1, sdk: 0},
		{send: []string{"[1,2]", "[{}]", `[{"jsonrpc":"2.0","id":2,"result":{}}, {"id":3}]`}, want: 3, sdk: 0},
	}, sdkEnds: "invalid message version tag", own: [][]string{
		{initedOld},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},` + errLine("null", -32600, notMessage) + "," + errLine(`"k"`, -32600, notMessage) + "," + errLine("null", -32600, notMessage) + "]\n"},
		{
			"[" + errLine("3", -32600, notMessage) + "]\n",
			"[" + errLine("null", -32600, notMessage) + "," + errLine("null", -32600, notMessage) + "]\n",
			"[" + errLine("null", -32600, notMessage) + "]\n",
		},
	}},
	{name: "batch after 2025-06-18", bare: true, steps: []step{
		{send: []string{initNew, initedMsg}, want: 1, sdk: 1},
		{send: []string{ping(1)}, want: 1, sdk: 1},
		{send: []string{batchOf(ping(2)), "[]", "[1]", ping(3)}, want: 4, sdk: 0},
	}, sdkEnds: "JSON-RPC batching is not supported", own: [][]string{
		{initedNew}, {`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"},
		{
			errLine("null", -32600, "invalid request: an empty batch") + "\n",
			errLine("null", -32600, "invalid request: protocol version 2025-06-18 has no JSON-RPC batches (removed in 2025-06-18)") + "\n",
			errLine("null", -32600, "invalid request: protocol version 2025-06-18 has no JSON-RPC batches (removed in 2025-06-18)") + "\n",
			`{"jsonrpc":"2.0","id":3,"result":{}}` + "\n",
		},
	}},
	{name: "drain at the end of input", steps: []step{
		{send: []string{initOld, initedMsg, echoCall(1, "a"), ping(2), echoCall(3, "b")}}, // stdin ends at once
	}},
}

func diffServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "block"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		<-ctx.Done() // until the session ends
		return nil, nil, ctx.Err()
	})
	release := make(chan struct{})
	var once sync.Once
	sdk.AddTool(srv, &sdk.Tool{Name: "hold"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		select { // until released
		case <-release:
			return &sdk.CallToolResult{}, nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "release"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		once.Do(func() { close(release) })
		return &sdk.CallToolResult{}, nil, nil
	})
	return srv
}

// play runs script against a server served through the transport mk
// makes, and returns its output, step by step (the lines of each sorted;
// the last step's are those up to the end of the session), and how Run
// ended.
func play(t *testing.T, mk func(io.Reader, io.Writer) sdk.Transport, steps []step) (out [][]string, runErr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := diffServer().Run(ctx, mk(inR, outW))
		outW.Close()
		done <- err
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		br := bufio.NewReader(outR)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				lines <- l
			}
			if err != nil {
				return
			}
		}
	}()
	input := make(chan string, 64) // written in order; a session that ended reads no more
	go func() {
		for s := range input {
			if _, err := io.WriteString(inW, s); err != nil {
				break
			}
		}
		inW.Close()
	}()
	for i, s := range steps {
		for _, l := range s.send {
			input <- l + "\n"
		}
		var got []string
		for len(got) < s.want {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("step %d: the output ended after %d of %d lines: %q", i, len(got), s.want, got)
				}
				got = append(got, l)
			case <-ctx.Done():
				t.Fatalf("step %d: %d of %d lines in time: %q", i, len(got), s.want, got)
			}
		}
		if i == len(steps)-1 {
			close(input) // stdin ends
			for l := range lines {
				got = append(got, l)
			}
		}
		slices.Sort(got)
		out = append(out, got)
	}
	select {
	case err := <-done:
		if err != nil {
			runErr = err.Error()
		}
	case <-ctx.Done():
		t.Fatal("Run did not return")
	}
	inR.Close() // the reference's reading goroutine may still wait on stdin
	return out, runErr
}

func TestStdioDifferential(t *testing.T) {
	transports := []struct {
		name string
		mk   func(io.Reader, io.Writer) sdk.Transport
		bare bool
	}{
		{"Stdio", func(r io.Reader, w io.Writer) sdk.Transport { return Stdio(r, w, 5*time.Second) }, false},
		{"legacyStdio", func(r io.Reader, w io.Writer) sdk.Transport { return legacyStdio(r, w, 5*time.Second) }, false},
		{"IOTransport", func(r io.Reader, w io.Writer) sdk.Transport {
			return &sdk.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}}
		}, true},
	}
	for _, sc := range diffScripts {
		t.Run(sc.name, func(t *testing.T) {
			want, wantErr := play(t, transports[0].mk, sc.steps)
			t.Logf("Stdio: %q, Run: %v", want, wantErr)
			if sc.sdkEnds != "" {
				// Stdio serves on, and writes what JSON-RPC 2.0 asks.
				if !slices.EqualFunc(want, sc.own, func(a, b []string) bool { return slices.Equal(a, slices.Sorted(slices.Values(b))) }) || wantErr != "" {
					t.Errorf("Stdio:\n got %q, Run: %q\nwant %q, Run: nil", want, wantErr, sc.own)
				}
			}
			for _, tr := range transports[1:] {
				if tr.bare && !sc.bare {
					continue
				}
				if sc.sdkEnds != "" {
					steps := slices.Clone(sc.steps)
					for i := range steps {
						steps[i].want = steps[i].sdk
					}
					_, gotErr := play(t, tr.mk, steps)
					if !strings.Contains(gotErr, sc.sdkEnds) {
						t.Errorf("%s: Run returned %q, want the session ended with %q", tr.name, gotErr, sc.sdkEnds)
					}
					continue
				}
				got, gotErr := play(t, tr.mk, sc.steps)
				for _, lines := range got {
					for i, l := range lines { // the reference left the member out
						lines[i] = strings.Replace(l, `{"jsonrpc":"2.0","error":`, `{"jsonrpc":"2.0","id":null,"error":`, 1)
					}
					slices.Sort(lines)
				}
				if !slices.EqualFunc(got, want, slices.Equal) {
					t.Errorf("%s:\n got %q\nwant %q (Stdio)", tr.name, got, want)
				}
				if gotErr != wantErr {
					t.Errorf("%s: Run returned %q, Stdio's %q", tr.name, gotErr, wantErr)
				}
			}
		})
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
