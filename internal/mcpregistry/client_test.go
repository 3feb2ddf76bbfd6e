package mcpregistry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func entryJSON(name, version string) string {
	return fmt.Sprintf(`{"server":{"name":%q,"description":"d","version":%q,"packages":[{"registryType":"npm","identifier":"p","version":%q,"transport":{"type":"stdio"}}]},
		"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":true}}}`, name, version, version)
}

// fake is a registry answering from a table of paths, with ETags.
type fake struct {
	pages            map[string]string // path?query -> body
	hits, notModifed atomic.Int32
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	key := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		key += "?" + r.URL.RawQuery
	}
	body, ok := f.pages[key]
	if !ok {
		http.Error(w, `{"error":"Server not found"}`, http.StatusNotFound)
		return
	}
	etag := fmt.Sprintf(`"%x"`, len(body))
	if r.Header.Get("If-None-Match") == etag {
		f.notModifed.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("ETag", etag)
	fmt.Fprint(w, body)
}

func TestClient(t *testing.T) {
	ctx := context.Background()
	f := &fake{pages: map[string]string{
		"/v0.1/servers?search=ev&version=latest":                          `{"servers":[` + entryJSON("a.b/ev1", "1.0.0") + `],"metadata":{"nextCursor":"a.b/ev1:1.0.0","count":1}}`,
		"/v0.1/servers?cursor=a.b%2Fev1%3A1.0.0&search=ev&version=latest": `{"servers":[` + entryJSON("a.b/ev2", "2.0.0") + `,{"server":{"name":"broken"}}],"metadata":{}}`,
		"/v0.1/servers/a.b%2Fev1/versions/latest":                         entryJSON("a.b/ev1", "1.0.0"),
		"/v0.1/servers/a.b%2Fev1/versions/1.0.0":                          entryJSON("a.b/ev1", "1.0.0"),
		"/v0.1/servers/a.b%2Fliar/versions/1.0.0":                         entryJSON("a.b/liar", "1.0.1"),
		"/v0.1/servers/a.b%2Fimpostor/versions/latest":                    entryJSON("a.b/other", "1.0.0"),
		"/v0.1/servers/a.b%2Fbad/versions/latest":                         `{"server":{"name":"a.b/bad","description":"d","version":"latest"}}`,
		"/v0.1/servers/a.b%2Fev1/versions":                                `{"servers":[` + entryJSON("a.b/ev1", "1.0.0") + `,` + entryJSON("a.b/ev1", "0.9.0") + `]}`,
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c := &Client{Registries: []string{srv.URL}, Cache: NewCache(t.TempDir())}

	t.Run("search follows cursors, drops a bad entry with a notice", func(t *testing.T) {
		es, notes, err := c.Search(ctx, Query{Search: "ev", Version: "latest"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 2 || es[0].Server.Name != "a.b/ev1" || es[1].Server.Name != "a.b/ev2" || es[0].Registry != srv.URL {
			t.Fatalf("entries %+v", es)
		}
		if len(notes) != 1 || !strings.Contains(notes[0].Text, "skipped an entry") {
			t.Fatalf("notes %v", notes)
		}
	})
	t.Run("etag revalidation", func(t *testing.T) {
		before := f.notModifed.Load()
		if _, _, err := c.Search(ctx, Query{Search: "ev", Version: "latest"}, 0); err != nil {
			t.Fatal(err)
		}
		if got := f.notModifed.Load() - before; got != 2 {
			t.Fatalf("%d answers were 304, want 2 (both pages cached)", got)
		}
	})
	t.Run("get and versions", func(t *testing.T) {
		e, _, err := c.Get(ctx, "a.b/ev1", "1.0.0")
		if err != nil || e.Server.Version != "1.0.0" {
			t.Fatalf("%+v %v", e, err)
		}
		vs, _, err := c.Versions(ctx, "a.b/ev1")
		if err != nil || len(vs) != 2 {
			t.Fatalf("%+v %v", vs, err)
		}
		if _, _, err := c.Get(ctx, "a.b/nope", ""); !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("a registry that lies is refused", func(t *testing.T) {
		_, _, err := c.Get(ctx, "a.b/liar", "1.0.0")
		if err == nil || !strings.Contains(err.Error(), `answered for a.b/liar@1.0.0 with version "1.0.1": refused`) {
			t.Fatalf("err = %v", err)
		}
		_, _, err = c.Get(ctx, "a.b/impostor", "")
		if err == nil || !strings.Contains(err.Error(), `with server "a.b/other": refused`) {
			t.Fatalf("err = %v", err)
		}
		_, _, err = c.Get(ctx, "a.b/bad", "")
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("err = %v, want ErrMalformed", err)
		}
	})
	t.Run("unreachable: the cache is used and said so", func(t *testing.T) {
		down := &Client{Registries: []string{srv.URL}, Cache: c.Cache}
		srv.Close()
		es, notes, err := down.Search(ctx, Query{Search: "ev", Version: "latest"}, 0)
		if err != nil || len(es) != 2 {
			t.Fatalf("%v %v", es, err)
		}
		if len(notes) == 0 || !strings.Contains(notes[0].Text, "unreachable") || !strings.Contains(notes[0].Text, "used the cached answer from") {
			t.Fatalf("notes %v", notes)
		}
		_, _, err = down.Search(ctx, Query{Search: "never asked"}, 0)
		var ue *UnreachableError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("err = %v, want UnreachableError", err)
		}
	})
}

func TestClientRegistriesInOrder(t *testing.T) {
	ctx := context.Background()
	private := httptest.NewServer(&fake{pages: map[string]string{
		"/v0.1/servers?version=latest":               `{"servers":[` + entryJSON("a.b/shared", "9.0.0") + `]}`,
		"/v0.1/servers/a.b%2Fshared/versions/latest": entryJSON("a.b/shared", "9.0.0"),
	}})
	defer private.Close()
	public := httptest.NewServer(&fake{pages: map[string]string{
		"/v0.1/servers?version=latest":               `{"servers":[` + entryJSON("a.b/shared", "1.0.0") + `,` + entryJSON("a.b/only", "1.0.0") + `]}`,
		"/v0.1/servers/a.b%2Fshared/versions/latest": entryJSON("a.b/shared", "1.0.0"),
		"/v0.1/servers/a.b%2Fonly/versions/latest":   entryJSON("a.b/only", "1.0.0"),
	}})
	defer public.Close()
	// A registry that is down, first: the others still answer, with a notice.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	c := &Client{Registries: []string{dead, private.URL, public.URL}}
	es, notes, err := c.Search(ctx, Query{Version: "latest"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Server.Version != "9.0.0" || es[0].Registry != private.URL || es[1].Server.Name != "a.b/only" {
		t.Fatalf("entries %+v", es)
	}
	if len(notes) != 1 || notes[0].Registry != dead {
		t.Fatalf("notes %v", notes)
	}
	e, _, err := c.Get(ctx, "a.b/only", "")
	if err != nil || e.Registry != public.URL {
		t.Fatalf("%+v %v", e, err)
	}
}
