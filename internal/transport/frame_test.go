package transport

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFrameOf(t *testing.T) {
	tests := []struct {
		line   string
		id     string
		method string
		ok     bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}` + "\n", "7", "tools/call", true},
		{`{"jsonrpc":"2.0","id":"a","result":{"content":[]}}`, `"a"`, "", true},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m"}}`, "3", "", true},
		{`{"params":{"x":[1,2,{"y":null}]},"method":"m","id":1,"jsonrpc":"2.0"}`, "1", "m", true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "notifications/initialized", true},
		{`{"id":null,"method":"m"}`, "null", "m", true},
		{`{}`, "", "", true},
		{``, "", "", false},
		{`[1,2]`, "", "", false},
		{`"str"`, "", "", false},
		{`{"id":`, "", "", false},
		{`{"method":5,"id":1}`, "", "", false},
		{`{"id":1,"method":"m"`, "1", "m", true}, // known before the cut: enough for the drainer
		{`{"a":}`, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			f, ok := frameStream([]byte(tt.line))
			if ok != tt.ok || string(f.ID) != tt.id || f.Method != tt.method {
				t.Errorf("frameStream = {%s %q} %v, want {%s %q} %v", f.ID, f.Method, ok, tt.id, tt.method, tt.ok)
			}
			// Padded past streamFrom inside a skipped value, the public entry
			// point takes the token path and agrees.
			if !tt.ok || !strings.HasPrefix(tt.line, "{") || tt.line == "{}" || !strings.HasSuffix(strings.TrimSpace(tt.line), "}") {
				return
			}
			padded := `{"pad":"` + strings.Repeat("x", streamFrom) + `",` + strings.TrimPrefix(tt.line, "{")
			if f, ok := frameOf([]byte(padded)); !ok || string(f.ID) != tt.id || f.Method != tt.method {
				t.Errorf("frameOf(padded) = {%s %q} %v", f.ID, f.Method, ok)
			}
		})
	}
}

// frameStream accepts every object a full decode accepts and finds its id.
func FuzzFrameOf(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`, `{"id":"x","result":1}`, `{"method":"n"}`, `{}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return
		}
		var full frame
		if json.Unmarshal(b, &full) != nil {
			frameStream(b) // must not panic
			return
		}
		got, ok := frameStream(b)
		if !ok {
			if strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
				t.Errorf("frameOf rejected a valid object %q", b)
			}
			return
		}
		if len(full.ID) > 0 && len(got.ID) == 0 {
			t.Errorf("frameStream lost the id %s of %q", full.ID, b)
		}
	})
}

func BenchmarkFrame(b *testing.B) {
	big := `{"jsonrpc":"2.0","id":2,"result":{"tools":[` + strings.Repeat(`{"name":"t","description":"a tool","inputSchema":{"type":"object"}},`, 2000) + `{"name":"z"}]}}`
	for _, bc := range []struct{ name, line string }{
		{"call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}`},
		{"result", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}]}}`},
		{"list-2000", big},
	} {
		line := []byte(bc.line)
		b.Run(bc.name+"/unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var f frame
				if err := json.Unmarshal(line, &f); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/stream", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				frameStream(line)
			}
		})
	}
}
