package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzBearer: ParseBearer never panics, accepts only "Bearer" + token68,
// and round-trips every token it accepts.
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"", "Bearer", "Bearer ", "Bearer abc", "bearer abc==", "BEARER  a.b.c", "Basic abc",
		"Bearer a b", "Bearer =", "Bearer a=b", "Bearer \x00", "Bearer ab\xff",
		"Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		// Small inputs only: a 16 KiB seed made the fuzzer spend its time
		// minimising (0 executions/s); TestBearerTooLong covers the bound.
		if len(h) > 128 {
			return
		}
		tok, err := ParseBearer(h)
		if err != nil {
			if tok != "" {
				t.Fatalf("token with error: %q", tok)
			}
			if strings.Contains(err.Error(), h) && len(h) > 8 {
				t.Fatalf("error echoes the header: %v", err)
			}
			return
		}
		if tok == "" || len(tok) > maxTokenLen || !strings.EqualFold(h[:7], "Bearer ") {
			t.Fatalf("accepted %q as %q", h, tok)
		}
		for i := 0; i < len(tok); i++ {
			c := tok[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/=", c) >= 0) {
				t.Fatalf("accepted byte %q in %q", c, tok)
			}
		}
		if again, err := ParseBearer("Bearer " + tok); err != nil || again != tok {
			t.Fatalf("round trip of %q: %q %v", tok, again, err)
		}
	})
}

// FuzzSessionHeader: whatever Mcp-Session-Id (and method) a client sends,
// the handler answers a 4xx or 2xx, never 5xx, and never panics.
func FuzzSessionHeader(f *testing.F) {
	h, err := NewHTTP(HTTPOptions{Server: testMCPServer(nil), RatePerSecond: -1})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "abc", "FORGED", "a b", "\x00", strings.Repeat("x", 300), "é", "../../etc", "%00"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, sid string, m uint8) {
		method := []string{http.MethodPost, http.MethodGet, http.MethodDelete}[int(m)%3]
		body := ""
		if method == http.MethodPost {
			body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		}
		req := httptest.NewRequest(method, "http://127.0.0.1:8321"+MCPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header["Mcp-Session-Id"] = []string{sid}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s with session %q: %d %s", method, sid, rec.Code, rec.Body)
		}
		if sid != "" && rec.Code < 300 && method != http.MethodPost {
			t.Fatalf("%s with unknown session %q succeeded: %d", method, sid, rec.Code)
		}
	})
}

func TestBearerTooLong(t *testing.T) {
	for _, n := range []int{maxTokenLen, maxTokenLen + 1} {
		_, err := ParseBearer("Bearer " + strings.Repeat("a", n))
		if (err == nil) != (n <= maxTokenLen) {
			t.Errorf("token of %d bytes: %v", n, err)
		}
	}
}
