package openapi

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agent-tools/agent-tools/internal/secrets"
)

// TestSecretRefRotatedOn401: a bearer from ${file:…} (resolved when the
// provider was built) is rotated at its store; the API answers 401 to the
// old one, the request goes out once more with the new value, and the call
// succeeds without a restart.
func TestSecretRefRotatedOn401(t *testing.T) {
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "tok")
	if err := os.WriteFile(tokFile, []byte("rotating-bearer-old-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := secrets.NewResolver()
	r.Dir = dir
	bearer, err := r.Expand(context.Background(), "${file:tok}")
	if err != nil {
		t.Fatal(err)
	}
	var want atomic.Value
	want.Store("Bearer rotating-bearer-old-1")
	b := newBackend(t, func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != want.Load().(string) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	p := petsProvider(t, b, func(o *Options) { o.Auth = &Auth{Bearer: bearer} })
	if _, err := call(t, p, "pets/list", `{}`); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokFile, []byte("rotating-bearer-new-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want.Store("Bearer rotating-bearer-new-2")
	n := len(b.requests())
	res, err := call(t, p, "pets/list", `{}`)
	if err != nil || res.IsError {
		t.Fatalf("after rotation: %+v %v", res, err)
	}
	reqs := b.requests()[n:]
	if len(reqs) != 2 || reqs[0].Header.Get("Authorization") != "Bearer rotating-bearer-old-1" || reqs[1].Header.Get("Authorization") != "Bearer rotating-bearer-new-2" {
		t.Errorf("want the old bearer (401) then the new one; got %d requests", len(reqs))
	}
}
