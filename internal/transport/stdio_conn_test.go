package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// serveAll runs diffServer on in through Stdio and returns its output lines
// (sorted by nothing: as written) and Run's error.
func serveAll(t testing.TB, in io.Reader, drain time.Duration) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := diffServer().Run(ctx, Stdio(in, &out, drain))
	if ctx.Err() != nil {
		t.Fatal("Run did not return")
	}
	var lines []string
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, err
}

// Where the Stdio of before passed a line to the SDK's decoder, which then
// ended the session (white space after the message other than a newline,
// white space JSON does not know), Stdio takes the message, or answers the
// line as not JSON.
func TestStdioWhiteSpace(t *testing.T) {
	in := strings.Join([]string{
		initOld, initedMsg,
		ping(1) + " \t ",                  // taken
		"\f" + ping(2),                    // not JSON
		ping(3) + "\u00a0",                // not JSON
		"\u00a0",                          // blank (as bytes.TrimSpace sees it)
		" " + batchOf(ping(4)) + "  \r\r", // taken
		ping(5),
	}, "\n") + "\n"
	lines, err := serveAll(t, strings.NewReader(in), 5*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{`"id":1,"result"`, `[{"jsonrpc":"2.0","id":4,"result":{}}]`, `"id":5,"result"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s in\n%s", want, all)
		}
	}
	if n := strings.Count(all, `"code":-32700`); n != 2 || len(lines) != 6 {
		t.Errorf("want 6 lines, 2 parse errors:\n%s", all)
	}
}

// When stdin ends, every request read is answered: those of a batch too, and
// a last line without its newline.
func TestStdioDrainsEverything(t *testing.T) {
	in := initOld + "\n" + initedMsg + "\n" + batchOf(echoCall(1, "a"), ping(2)) + "\n" + echoCall(3, "last")
	lines, err := serveAll(t, strings.NewReader(in), 10*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	all := strings.Join(lines, "\n")
	if len(lines) != 3 || !strings.Contains(all, `[{"jsonrpc":"2.0","id":1,`) || !strings.Contains(all, `"text":"last"`) {
		t.Fatalf("want the initialize result, the batch's and the last call's:\n%s", all)
	}
}

// A batch with a notification is answered (the SDK holds a slot for the
// notification's answer, so it never wrote the batch, and the drain would
// have waited for it).
func TestStdioBatchWithNotification(t *testing.T) {
	in := initOld + "\n" + batchOf(ping(1), initedMsg) + "\n"
	lines, err := serveAll(t, strings.NewReader(in), time.Minute)
	if err != nil || len(lines) != 2 || lines[1] != `[{"jsonrpc":"2.0","id":1,"result":{}}]` {
		t.Fatalf("Run: %v, %q", err, lines)
	}
}

// A tools/call of several MB is one line like any other; a line over the
// SDK's limit (16 MiB) ends the session as the SDK's transport does, without
// reading it whole.
func TestStdioLongLines(t *testing.T) {
	big := strings.Repeat("x", 5<<20)
	in := initOld + "\n" + initedMsg + "\n" + echoCall(1, big) + "\n" + ping(2) + "\n"
	lines, err := serveAll(t, strings.NewReader(in), 10*time.Second)
	if err != nil || len(lines) != 3 || !strings.Contains(lines[1]+lines[2], big) {
		t.Fatalf("Run: %v; %d lines", err, len(lines))
	}

	over := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"p":"` + strings.Repeat("y", maxLine) + `"}}`
	r := &countingSource{r: strings.NewReader(initOld + "\n" + over + "\n" + ping(4) + "\n")}
	lines, err = serveAll(t, r, 10*time.Second)
	if !errors.Is(err, errLineTooLong) || len(lines) != 1 {
		t.Fatalf("Run: %v; %d lines", err, len(lines))
	}
	if r.n > int64(maxLine)+1<<20 {
		t.Errorf("read %d bytes", r.n)
	}

	// Exactly at the limit: taken.
	pad := maxLine - len(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"p":""}}`)
	atMax := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"p":"` + strings.Repeat("z", pad) + `"}}`
	lines, err = serveAll(t, strings.NewReader(initOld+"\n"+atMax+"\n"), 10*time.Second)
	if err != nil || len(lines) != 2 {
		t.Fatalf("a line of exactly %d bytes: Run: %v; %d lines", maxLine, err, len(lines))
	}
}

type countingSource struct {
	r io.Reader
	n int64
}

func (s *countingSource) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	return n, err
}

// Close ends a Read waiting for input, and any Read after it.
func TestStdioCloseUnblocksRead(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	conn, err := Stdio(inR, io.Discard, time.Second).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		got <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != io.EOF {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, err := conn.Read(context.Background()); err != io.EOF {
		t.Fatalf("second Read: %v", err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := conn.Read(ctx); err != context.Canceled {
		t.Fatalf("Read with a cancelled context: %v", err)
	}
}

// Writes from many goroutines come out one message per line, whole.
func TestStdioConcurrentWrites(t *testing.T) {
	var out testutil.SyncBuffer
	inR, inW := io.Pipe()
	defer inW.Close()
	conn, err := Stdio(inR, &out, time.Second).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			text := strings.Repeat(fmt.Sprint(i%10), 1000+i)
			msg := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(fmt.Sprintf(`{"data":%q}`, text))}
			if i%2 == 1 {
				id, _ := jsonrpc.MakeID(float64(i))
				msg.ID = id
			}
			if err := conn.Write(context.Background(), msg); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines for %d messages", len(lines), n)
	}
	for _, l := range lines {
		if _, err := jsonrpc.DecodeMessage([]byte(l)); err != nil {
			t.Fatalf("%v: %.80s", err, l)
		}
	}
}

// FuzzStdioInput: whatever the client sends, the server does not panic,
// every line it writes is JSON, and the session lasts until stdin ends (no
// line ends it: the fuzzer's inputs are under the line limit).
func FuzzStdioInput(f *testing.F) {
	for _, s := range []string{
		initOld + "\n" + initedMsg + "\n" + echoCall(1, "a") + "\n",
		batchOf(initOld, ping(1)) + "\n" + batchOf(initedMsg) + "\n",
		"garbage\n{\"id\":3}\n[]\n[1]\n\n" + ping(2),
		batchOf(ping(1), ping(1)) + "\n",
		initNew + "\n" + batchOf(ping(1)) + "\n" + ping(2) + "\n",
		initOld + "\n[]\n[1,2]\n[{}]\n" + batchOf(ping(1), noteMsg, noteMsg, ping(1)) + "\n" + ping(3) + "\n",
		" \t" + ping(`"s"`) + "\r\n\u00a0\n\f\n",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("é", 40000) + `"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var out testutil.SyncBuffer
		srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
		sdk.AddTool(srv, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, a struct{ Text string }) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil, nil
		})
		err := srv.Run(ctx, Stdio(bytes.NewReader(in), &out, 2*time.Second))
		if ctx.Err() != nil {
			t.Fatalf("%q: Run did not return", in)
		}
		if err != nil && len(in) < maxLine {
			t.Fatalf("%q: the session ended: %v", in, err)
		}
		for l := range strings.Lines(out.String()) {
			if !strings.HasSuffix(l, "\n") || !json.Valid([]byte(l)) {
				t.Fatalf("%q: wrote %q", in, l)
			}
		}
	})
}

// BenchmarkStdioRead reads tools/call lines through Stdio's connection and
// through the SDK's mcp.IOTransport (behind which the Stdio of before
// screened each line too): the cost per line read.
func BenchmarkStdioRead(b *testing.B) {
	line := echoCall(12, strings.Repeat("x", 64))
	line = strings.Replace(line, `"arguments"`, `"_meta":{"progressToken":"t"},"arguments"`, 1) + "\n"
	for _, tr := range []struct {
		name string
		mk   func(io.Reader) sdk.Transport
	}{
		{"Stdio", func(r io.Reader) sdk.Transport { return Stdio(r, io.Discard, time.Second) }},
		{"IOTransport", func(r io.Reader) sdk.Transport {
			return &sdk.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{io.Discard}}
		}},
		{"legacyStdio", func(r io.Reader) sdk.Transport { return legacyStdio(r, io.Discard, time.Second) }},
	} {
		b.Run(tr.name, func(b *testing.B) {
			in := &repeatReader{line: []byte(line)}
			conn, err := tr.mk(in).Connect(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				m, err := conn.Read(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "tools/call" {
					b.Fatalf("read %v", m)
				}
			}
		})
	}
}

// repeatReader reads line over and over.
type repeatReader struct {
	line []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off = (r.off + c) % len(r.line)
	}
	return n, nil
}
