package transport

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Regression: a request without Mcp-Session-Id got 200 and
// a JSON-RPC error of code 0.
func TestRequestWithoutSessionIsA400(t *testing.T) {
	tests := []struct {
		name, body string
		wantID     any
	}{
		{"request", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, float64(2)},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}`, "a"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
	}
	_, srv, _ := start(t, HTTPOptions{})
	initSession(t, srv.URL, nil) // a session exists; the request just does not name it
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, srv.URL, tt.body, map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
			body := readBody(t, resp)
			if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			var m struct {
				ID    any `json:"id"`
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				t.Fatalf("not JSON-RPC: %s", body)
			}
			if m.Error.Code != -32600 || m.ID != tt.wantID || !strings.Contains(m.Error.Message, "Mcp-Session-Id header is required") {
				t.Fatalf("error = %+v", m)
			}
		})
	}
	// initialize without a session id still opens one; stateless needs none.
	initSession(t, srv.URL, nil)
	_, sl, _ := start(t, HTTPOptions{Stateless: true})
	resp := post(t, sl.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
	if body := readBody(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("stateless: %d %s", resp.StatusCode, body)
	}
}

func TestMetadataWithoutAuthSaysWhy(t *testing.T) {
	_, srv, _ := start(t, HTTPOptions{})
	resp, err := http.Get(srv.URL + MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "no inbound auth configured") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
