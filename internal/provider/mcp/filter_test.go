package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestResponseID(t *testing.T) {
	tests := []struct {
		head, tail string
		want       string
	}{
		{`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"xxx`, `xxx"}]}}`, "5"},
		{`{ "id" : "a\"b" , "jsonrpc":"2.0","result":`, `}}`, `"a\"b"`},
		{`{"result":{"content":[{"type":"text","text":"yyy`, `yyy"}]},"jsonrpc":"2.0","id":12}`, "12"},
		{`{"result":{"x":1},"id":-3,"jsonrpc":"2.0"}`, `{"result":{"x":1},"id":-3,"jsonrpc":"2.0"}`, "-3"},
		// An id inside the result is not the message's.
		{`{"result":{"content":[{"id":7,`, `{"id":7}}`, ""},
		{`{"jsonrpc":"2.0","result":{"a":{"id":7}}}`, `{"a":{"id":7}}}`, ""},
		// A request from the upstream is never taken for a response.
		{`{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":`, `}}`, ""},
		{`not json at all`, `not json at all`, ""},
	}
	for _, tt := range tests {
		got := string(responseID([]byte(tt.head), []byte(tt.tail)))
		if got != tt.want {
			t.Errorf("responseID(%q, %q) = %q, want %q", tt.head, tt.tail, got, tt.want)
		}
	}
}

// filterOutput is everything a lineFilter passes on, one encoded message a
// line, and what it reported.
func filterOutput(t *testing.T, in string, max int, pendingIDs ...int64) (string, []string) {
	t.Helper()
	pending := newPendingCalls()
	for _, id := range pendingIDs {
		jid, err := jsonrpc.MakeID(float64(id))
		if err != nil {
			t.Fatal(err)
		}
		pending.add(jid)
	}
	var problems []string
	f := newLineFilter(io.NopCloser(strings.NewReader(in)), max, pending, func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	})
	var out strings.Builder
	for {
		msgs, err := f.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			b, err := jsonrpc.EncodeMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
	}
	return out.String(), problems
}

func TestLineFilter(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":1,"result":{}}`
	big := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("z", 300) + `"}}`
	in := ok + "\r\n" +
		"\n   \n" + // blank lines
		"starting server...\n" + // a log line
		`{"not":"jsonrpc"}` + "\n" +
		big + "\n" + // over max, id 2 pending
		`{"jsonrpc":"2.0","id":3,"result":{` + "\n" + // malformed, id 3 pending
		`{"jsonrpc":"2.0","id":9,"result":{` + "\n" + // malformed, id 9 not pending: dropped
		`[` + ok + `,{"jsonrpc":"2.0","method":"ping","id":"s1"}]` + "\n" + // a batch
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` // no final newline
	out, problems := filterOutput(t, in, 200, 2, 3)
	want := []string{
		ok,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"the upstream sent a message of 346 bytes, over the 200 bytes limit"}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"the upstream sent a malformed message (not a JSON-RPC message)"}}`,
		ok,
		`{"jsonrpc":"2.0","id":"s1","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	}
	if got := strings.TrimSuffix(out, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if len(problems) != 5 {
		t.Errorf("problems = %q", problems)
	}
}

func TestLineFilterHugeLineInChunks(t *testing.T) {
	// A line much longer than the bufio buffer, id last.
	line := `{"result":{"t":"` + strings.Repeat("q", 1<<20) + `"},"jsonrpc":"2.0","id":77}`
	out, problems := filterOutput(t, line+"\n"+`{"jsonrpc":"2.0","id":78,"result":{}}`+"\n", 64<<10, 77, 78)
	if !strings.Contains(out, `"id":77,"error"`) || !strings.Contains(out, "message of 1.0 MiB") || !strings.HasSuffix(out, `{"jsonrpc":"2.0","id":78,"result":{}}`+"\n") {
		t.Errorf("out = %.300s", out)
	}
	if len(problems) != 1 {
		t.Errorf("problems = %q", problems)
	}
}

func TestToResult(t *testing.T) {
	size := int64(10)
	res := toResult(&sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "héllo"},
		&sdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 42)},
		&sdk.ImageContent{Data: make([]byte, 3)},
		&sdk.ResourceLink{URI: "file:///a.txt", Name: "a", MIMEType: "text/plain", Size: &size},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://x", Text: "inline"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://b", MIMEType: "application/zip", Blob: make([]byte, 7)}},
	}}, 0)
	want := "héllo\n[audio/wav, 42 bytes]\n[image, 3 bytes]\n[resource link file:///a.txt (a), text/plain]\n[resource mem://x]\ninline\n[resource mem://b, application/zip, 7 bytes]"
	if res.Text != want {
		t.Errorf("text:\n%s\nwant:\n%s", res.Text, want)
	}
	// The blocks themselves stay typed beside the rendering.
	if len(res.Content) != 6 || res.Structured != nil {
		t.Errorf("content = %d blocks, structured %v", len(res.Content), res.Structured)
	}
	if img, ok := res.Content[2].(*sdk.ImageContent); !ok || len(img.Data) != 3 {
		t.Errorf("content[2] = %#v", res.Content[2])
	}
	// The upstream's own structured content wins; big binaries are not kept.
	res = toResult(&sdk.CallToolResult{StructuredContent: map[string]any{"k": 1}, Content: []sdk.Content{&sdk.ImageContent{Data: make([]byte, 5)}}}, 0)
	if b, _ := json.Marshal(res.Structured); string(b) != `{"k":1}` {
		t.Errorf("structured = %s", b)
	}
	res = toResult(&sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: make([]byte, maxKeptBinary+1)}}}, 0)
	if res.Structured != nil || res.Content != nil {
		t.Error("kept a big image")
	}
	// Truncation never splits a character.
	if got := capBytes("aé", 2); got != "a\n[upstream result truncated: 1 bytes of 3 bytes kept]" {
		t.Errorf("capBytes = %q", got)
	}
}

func TestMinimalEnv(t *testing.T) {
	got := minimalEnv([]string{"PATH=/bin", "HOME=/h", "LC_CTYPE=C", "LANG=C", "TMPDIR=/t", "TZ=UTC", "SECRET=x", "LD_PRELOAD=evil.so", "bad"},
		map[string]string{"PATH": "/opt/bin", "TOKEN": "t"})
	want := "HOME=/h LANG=C LC_CTYPE=C PATH=/opt/bin TMPDIR=/t TOKEN=t TZ=UTC"
	if strings.Join(got, " ") != want {
		t.Errorf("env = %v", got)
	}
}
