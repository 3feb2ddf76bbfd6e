package transport

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http"
	"strings"
	"testing"
)

// A session belongs to the endpoint that created it: its id on another
// endpoint (/mcp and /mcp/p/<slug> either way, or another profile's) is an
// unknown session, 404, and works again on its own endpoint.
func TestSessionBoundToEndpoint(t *testing.T) {
	ops, dev := testMCPServer(nil), testMCPServer(nil)
	profiles := map[string]*sdk.Server{"ops": ops, "dev": dev}
	_, srv, _ := start(t, HTTPOptions{
		Profile:  func(slug string) (*sdk.Server, bool) { s, ok := profiles[slug]; return s, ok },
		Profiles: func() []string { return []string{"dev", "ops"} },
	})
	def := srv.URL + MCPPath
	url := map[string]string{"default": def, "ops": def + "/p/ops", "dev": def + "/p/dev"}
	ids := map[string]string{}
	for name, u := range url {
		resp := postTo(t, u, initBody, nil)
		readBody(t, resp)
		ids[name] = resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != 200 || ids[name] == "" {
			t.Fatalf("initialize on %s: %d", name, resp.StatusCode)
		}
		r := postTo(t, u, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": ids[name], "Mcp-Protocol-Version": "2025-06-18"})
		if readBody(t, r); r.StatusCode != http.StatusAccepted {
			t.Fatalf("initialized on %s: %d", name, r.StatusCode)
		}
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	tests := []struct {
		session, endpoint string
		status            int
	}{
		{"default", "default", 200},
		{"ops", "ops", 200},
		{"default", "ops", 404},
		{"ops", "default", 404},
		{"ops", "dev", 404},
		{"dev", "ops", 404},
		{"dev", "dev", 200},
	}
	for _, tt := range tests {
		t.Run(tt.session+" on "+tt.endpoint, func(t *testing.T) {
			resp := postTo(t, url[tt.endpoint], list, map[string]string{"Mcp-Session-Id": ids[tt.session], "Mcp-Protocol-Version": "2025-06-18"})
			body := readBody(t, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, body, tt.status)
			}
			if tt.status == http.StatusNotFound && !strings.Contains(strings.ToLower(body), "session not found") {
				t.Errorf("404 body %q", body)
			}
		})
	}
}
