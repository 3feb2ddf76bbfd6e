package openapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// miniDoc is a one-operation document with the given servers[0] URL.
func miniDoc(server, path string) string {
	return fmt.Sprintf(`{"openapi":"3.0.0","info":{"title":"t","version":"1"},"servers":[{"url":%q}],
"paths":{%q:{"get":{"operationId":"ping","responses":{"200":{"description":"ok"}}}}}}`, server, path)
}

// A fetched document's servers[0] on another origin
// received the bearer. Credentials go only to the configured baseURL, to a
// local file's servers[0], or to the fetched document's own origin.
func TestCredentialsOnlyToTrustedOrigin(t *testing.T) {
	const bearer = "cnry-bearer-origin-1"
	other := newBackend(t, nil)
	var docBody string
	docSrv := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/openapi.json" {
			io.WriteString(w, docBody)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	local := filepath.Join(t.TempDir(), "api.json")
	if err := os.WriteFile(local, []byte(miniDoc(other.URL+"/api", "/ping")), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, server, spec, baseURL string
		target                      *backend
		sent                        bool
	}{
		{"fetched, servers[0] on another origin", other.URL + "/api", docSrv.URL + "/openapi.json", "", other, false},
		{"fetched, relative servers[0]", "/api", docSrv.URL + "/openapi.json", "", docSrv, true},
		{"fetched, servers[0] on the document's origin", docSrv.URL + "/api", docSrv.URL + "/openapi.json", "", docSrv, true},
		{"fetched, baseURL names the other origin", other.URL + "/api", docSrv.URL + "/openapi.json", other.URL + "/api", other, true},
		{"local file, servers[0] elsewhere", "", local, "", other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docBody = miniDoc(tt.server, "/ping")
			before := len(tt.target.requests())
			p := New(Options{Header: provider.Header{ID: "o"}, Spec: tt.spec, BaseURL: tt.baseURL, CacheDir: t.TempDir(), Auth: &Auth{Bearer: bearer}})
			if err := p.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			res, err := call(t, p, "ping", `{}`)
			reqs := tt.target.requests()[before:]
			var auth []string
			for _, r := range reqs {
				if r.Path != "/openapi.json" {
					auth = append(auth, r.Header.Get("Authorization"))
				}
			}
			if tt.sent {
				if err != nil || res.IsError || len(auth) != 1 || auth[0] != "Bearer "+bearer {
					t.Fatalf("want the call made with the bearer: %+v %v, Authorization %q", res, err, auth)
				}
				return
			}
			if len(auth) != 0 {
				t.Fatalf("the other origin got %d requests (Authorization %q)", len(auth), auth)
			}
			if te, ok := toolerr.As(err); !ok || te.Code != toolerr.ProviderUnavailable || !strings.Contains(te.Message, "baseURL") {
				t.Fatalf("want PROVIDER_UNAVAILABLE naming baseURL, got %v", err)
			}
			if d := p.Diagnostics()[0]; d.Status != "warning" || !strings.Contains(d.Reason, `set "baseURL"`) {
				t.Errorf("doctor does not warn: %+v", d)
			}
		})
	}
}

// A document path with a dot segment is not offered.
func TestDotSegmentPathsSkipped(t *testing.T) {
	for _, path := range []string{"/api/../admin", "/api/%2e%2e/admin", "/api/..%2fadmin", "/./x"} {
		doc := filepath.Join(t.TempDir(), "d.json")
		if err := os.WriteFile(doc, []byte(miniDoc("http://127.0.0.1:1/base", path)), 0o600); err != nil {
			t.Fatal(err)
		}
		p := New(Options{Header: provider.Header{ID: "d"}, Spec: doc})
		if err := p.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		tools, _ := p.Tools(context.Background())
		d := p.Diagnostics()
		if len(tools) != 0 || len(d) != 2 || d[1].Status != "skipped" || !strings.Contains(d[1].Reason, "could leave the base URL") {
			t.Errorf("%s: tools %v, diagnostics %+v", path, tools, d)
		}
	}
}

// A credential in the spec URL's query once appeared in
// doctor, the log, help texts and every PROVIDER_UNAVAILABLE message.
func TestSpecURLCredentialMasked(t *testing.T) {
	const canary = "cnry-spec-query-7"
	spec := "http://u:cnry-spec-pass-8@127.0.0.1:1/openapi.json?access_token=" + canary
	var log strings.Builder
	p := New(Options{Header: provider.Header{ID: "s"}, Spec: spec, CacheDir: t.TempDir(), Log: newTextLogger(&log)})
	startErr := p.Start(context.Background())
	_, callErr := call(t, p, "x", `{}`)
	outs := map[string]string{"start": fmt.Sprint(startErr), "call": fmt.Sprint(callErr), "info": p.Info().Description, "log": log.String()}
	d, _ := json.Marshal(p.Diagnostics())
	outs["doctor"] = string(d)
	for where, text := range outs {
		if strings.Contains(text, "cnry-spec") {
			t.Errorf("%s leaks the spec URL's credentials: %s", where, text)
		}
	}
	if !strings.Contains(outs["doctor"], "access_token=***") {
		t.Errorf("doctor does not show the masked URL: %s", outs["doctor"])
	}
}

// An API that echoes the bearer JSON-escaped (with "\/"),
// base64- or URL-encoded returned it to the model.
func TestEchoedCredentialScrubbed(t *testing.T) {
	const bearer = "cnry/bearer+echo=1&<x>"
	b := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		j, _ := json.Marshal(tok)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"php":"%s","go":%s,"b64":"%s","url":"%s","auth":%q}`, strings.ReplaceAll(string(j[1:len(j)-1]), "/", `\/`), j,
			base64.StdEncoding.EncodeToString([]byte(tok)), url.QueryEscape(tok), r.Header.Get("Authorization"))
	})
	p := petsProvider(t, b, func(o *Options) { o.Auth = &Auth{Bearer: bearer} })
	res, err := call(t, p, "pets/list", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := json.Marshal(res.Structured)
	for _, text := range []string{res.Text, string(st)} {
		for _, leak := range []string{"bearer+echo", `bearer\u002becho`, "bearer%2Becho", base64.StdEncoding.EncodeToString([]byte(bearer))[:16]} {
			if strings.Contains(text, leak) {
				t.Errorf("result holds %q: %s", leak, text)
			}
		}
	}
}

func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
