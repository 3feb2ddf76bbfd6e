package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/secrets"
)

// TestHTTPHeaderSecretRotated: a header from ${file:…} is rotated at its
// store while the session runs; the upstream then answers 401 to the old
// value, and the next call goes through with the new one, no restart.
func TestHTTPHeaderSecretRotated(t *testing.T) {
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "tok")
	if err := os.WriteFile(tokFile, []byte("mcp-rotating-old-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := secrets.NewResolver()
	r.Dir = dir
	hdr, err := r.Expand(context.Background(), "Bearer ${file:tok}")
	if err != nil {
		t.Fatal(err)
	}
	var want atomic.Value
	want.Store("Bearer mcp-rotating-old-1")
	var unauthorized atomic.Int32
	srv := newTestServer(t.TempDir())
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != want.Load().(string) {
			unauthorized.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(ts.Close)
	o := httpOptions(t, ts.URL)
	o.Headers = map[string]string{"Authorization": hdr}
	p := newProvider(t, o)
	if res := mustCall(t, p, "echo", `{"text":"before"}`); res.Text != "before" {
		t.Fatalf("echo = %+v", res)
	}
	if err := os.WriteFile(tokFile, []byte("mcp-rotating-new-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want.Store("Bearer mcp-rotating-new-2")
	if res := mustCall(t, p, "echo", `{"text":"after"}`); res.Text != "after" {
		t.Fatalf("after rotation: %+v", res)
	}
	if unauthorized.Load() == 0 {
		t.Error("the upstream never refused the old value: the test proves nothing")
	}
}
