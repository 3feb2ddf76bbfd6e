package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpcAnswer is a JSON-RPC response as the tests read it.
type rpcAnswer struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

// stdioAnswers serves lines (after initialize and initialized) on stdio
// and returns the answers to them, the initialize result left out.
func stdioAnswers(t *testing.T, lines ...string) (answers []rpcAnswer, raw string) {
	t.Helper()
	out, err := serveAll(t, strings.NewReader(strings.Join(append([]string{initNew, initedMsg}, lines...), "\n")+"\n"), 5*time.Second)
	if err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("Run: %v", err)
	}
	for _, l := range out {
		var a rpcAnswer
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if string(a.ID) != "0" {
			answers = append(answers, a)
		}
	}
	return answers, strings.Join(out, "\n")
}

// postSession posts body on an initialized session (stateful), or without
// one on a stateless server.
func postRPC(t *testing.T, stateless bool, body string) (status int, a rpcAnswer, raw string) {
	t.Helper()
	_, srv, _ := start(t, HTTPOptions{Stateless: stateless})
	hdr := map[string]string{}
	if !stateless {
		hdr = map[string]string{"Mcp-Session-Id": initSession(t, srv.URL, nil), "Mcp-Protocol-Version": "2025-06-18"}
	}
	resp := post(t, srv.URL, body, hdr)
	raw = readBody(t, resp)
	if resp.Header.Get("Content-Type") == "application/json" {
		_ = json.Unmarshal([]byte(raw), &a)
	} else if i := strings.Index(raw, "data: "); i >= 0 { // an SSE answer: its one event
		_ = json.Unmarshal([]byte(strings.SplitN(raw[i+len("data: "):], "\n", 2)[0]), &a)
	}
	return resp.StatusCode, a, raw
}

// TestJSONRPCIdOutOfRange: a numeric id the SDK cannot give back as sent
// (it reads ids as float64 and answers with their int64 conversion:
// 1.5e308 came back as -9223372036854775808, 1.5 as 1) is refused with
// -32600 and "id": null, on stdio and on HTTP; a whole number within
// ±(2^53-1), however written, is answered with its value.
func TestJSONRPCIdOutOfRange(t *testing.T) {
	bad := []string{"1.5e308", "-1.5e308", "1.5", "9007199254740993", "9223372036854775808", "1e20", "5e-1"}
	t.Run("stdio", func(t *testing.T) {
		var lines []string
		for _, id := range bad {
			lines = append(lines, ping(id))
		}
		lines = append(lines, ping("1e2"), ping("9007199254740991"), ping(-7))
		answers, raw := stdioAnswers(t, lines...)
		if strings.Contains(raw, "-9223372036854775808") || len(answers) != len(bad)+3 {
			t.Fatalf("want %d answers, none with a mangled id; got:\n%s", len(bad)+3, raw)
		}
		refused, answered := 0, map[string]bool{}
		for _, a := range answers {
			switch {
			case a.Error != nil && a.Error.Code == -32600 && string(a.ID) == "null" && strings.Contains(a.Error.Message, "numeric id must be"):
				refused++
			case a.Error == nil && a.Result != nil:
				answered[string(a.ID)] = true
			default:
				t.Errorf("unexpected answer: %+v", a)
			}
		}
		if refused != len(bad) || !answered["100"] || !answered["9007199254740991"] || !answered["-7"] {
			t.Fatalf("refused %d of %d, answered %v:\n%s", refused, len(bad), answered, raw)
		}
	})
	t.Run("stdio batch", func(t *testing.T) {
		out, err := serveAll(t, strings.NewReader(strings.Join([]string{initOld, initedMsg, batchOf(ping("1.5e308"), ping(2))}, "\n")+"\n"), 5*time.Second)
		if err != nil && !strings.Contains(err.Error(), "EOF") {
			t.Fatal(err)
		}
		if len(out) != 2 || !strings.HasPrefix(out[1], `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`) || !strings.Contains(out[1], `{"jsonrpc":"2.0","id":2,"result":{}}`) {
			t.Fatalf("batch answer: %q", out)
		}
	})
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("http stateless=%v", stateless), func(t *testing.T) {
			for _, id := range bad {
				status, a, raw := postRPC(t, stateless, ping(id))
				if status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32600 || string(a.ID) != "null" {
					t.Errorf("id %s: %d %s", id, status, raw)
				}
			}
			if status, a, raw := postRPC(t, stateless, ping("1e2")); status != http.StatusOK || string(a.ID) != "100" || a.Error != nil {
				t.Errorf("id 1e2: %d %s", status, raw)
			}
		})
	}
}

// TestMisCasedMethodIsAnswered: member names are case-sensitive, so
// {"Method": ...} has no method: the SDK took it for a response nobody
// asked for and dropped it, and its sender waited forever. It is answered
// -32600 with its id, on stdio and on HTTP; so is a notification whose "id"
// is mis-cased (it would never be answered either).
func TestMisCasedMethodIsAnswered(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":3,"Method":"ping"}`,
		`{"jsonrpc":"2.0","id":"s","METHOD":"ping"}`,
		`{"jsonrpc":"2.0","ID":4,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":5}`, // no method at all
		ping(6),
	}
	t.Run("stdio", func(t *testing.T) {
		answers, raw := stdioAnswers(t, lines...)
		byID := map[string]rpcAnswer{}
		for _, a := range answers {
			byID[string(a.ID)] = a
		}
		for id, key := range map[string]string{"3": `\"Method\" is not \"method\"`, `"s"`: `\"METHOD\" is not \"method\"`, "4": `\"ID\" is not \"id\"`, "5": `no \"method\"`} {
			a, ok := byID[id]
			if !ok || a.Error == nil || a.Error.Code != -32600 || !strings.Contains(raw, key) {
				t.Errorf("id %s: %+v (want -32600 saying %s)", id, a, key)
			}
		}
		if a := byID["6"]; a.Error != nil || a.Result == nil || len(answers) != 5 {
			t.Errorf("want 5 answers, ping 6 answered:\n%s", raw)
		}
	})
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("http stateless=%v", stateless), func(t *testing.T) {
			for i, want := range []string{"3", `"s"`, "4", "5"} {
				status, a, raw := postRPC(t, stateless, lines[i])
				if status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32600 || string(a.ID) != want {
					t.Errorf("%s: %d %s", lines[i], status, raw)
				}
			}
		})
	}
}

// TestTrickledBodyIsCut: a client that sends its body a byte at a time no
// longer holds the connection: when the body's read deadline passes the
// server answers 408 and closes it. A call whose body arrived in time
// keeps its stream open past that deadline, and its connection serves the
// next request.
func TestTrickledBodyIsCut(t *testing.T) {
	const deadline = 300 * time.Millisecond
	_, srv, _ := start(t, HTTPOptions{BodyTimeout: deadline})
	t.Run("trickled", func(t *testing.T) {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := initBody + strings.Repeat(" ", 10000) // 10 s at a byte per millisecond
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n",
			MCPPath, srv.Listener.Addr(), len(body))
		answered := make(chan *http.Response, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				resp = nil // closed without an answer: cut all the same
			}
			answered <- resp
		}()
		began := time.Now()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for i := 0; i < len(body); i++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if _, err := conn.Write([]byte{body[i]}); err != nil {
					return
				}
			}
		}()
		select {
		case resp := <-answered:
			if resp != nil && resp.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("answered %d, want 408", resp.StatusCode)
			}
			if took := time.Since(began); took < deadline {
				t.Fatalf("cut after %s, before the deadline (%s)", took, deadline)
			}
		case <-time.After(deadline + 5*time.Second):
			t.Fatalf("the trickled body held the connection for %s (body deadline %s)", time.Since(began), deadline)
		}
	})
	t.Run("a call outlives the body deadline", func(t *testing.T) {
		cs := connect(t, srv.URL, nil, nil)
		for range 2 { // the second reuses the first's connection
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": int(3 * deadline / time.Millisecond)}})
			if err != nil || res.Content[0].(*sdk.TextContent).Text != "done" {
				t.Fatalf("a call longer than the body deadline: %v %+v", err, res)
			}
		}
	})
}
