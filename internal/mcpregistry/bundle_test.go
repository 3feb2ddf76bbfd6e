package mcpregistry

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func bundleZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const manifest = `{"manifest_version":"0.2","name":"notes","version":"1.0.0",
 "server":{"type":"node","entry_point":"server/index.js",
   "mcp_config":{"command":"node","args":["${__dirname}/server/index.js","--dir","${user_config.notes_dir}"],
     "env":{"NOTES_TOKEN":"${user_config.token}","HOME_DIR":"${HOME}"}}},
 "user_config":{"token":{"type":"string","title":"Token","sensitive":true,"required":true},
   "notes_dir":{"type":"directory","title":"Notes","default":"/tmp/notes"}}}`

func TestFetchBundle(t *testing.T) {
	good := bundleZip(t, map[string]string{"manifest.json": manifest, "server/index.js": "// server"})
	evil := bundleZip(t, map[string]string{"manifest.json": manifest, "../escape.js": "x"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good.mcpb":
			w.Write(good)
		case "/evil.mcpb":
			w.Write(evil)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	none := func(string) (string, bool) { return "", false }
	ctx := context.Background()

	t.Run("checked, unpacked, mapped", func(t *testing.T) {
		dir := t.TempDir()
		p := &Plan{Bundle: &Bundle{URL: srv.URL + "/good.mcpb", SHA256: sum(good)}}
		if err := p.FetchBundle(ctx, nil, dir, none); err != nil {
			t.Fatal(err)
		}
		dest := filepath.Join(dir, sum(good))
		if p.Command != "node" || !reflect.DeepEqual(p.Args, []string{dest + "/server/index.js", "--dir", "${NOTES_DIR:-/tmp/notes}"}) {
			t.Fatalf("command %q %q", p.Command, p.Args)
		}
		want := []Var{{Key: "HOME_DIR", Value: "${HOME}"},
			{Key: "NOTES_TOKEN", Value: "${TOKEN}", Secret: true, Comment: "secret: set TOKEN in the environment; never written here"}}
		if !reflect.DeepEqual(p.Env, want) || !reflect.DeepEqual(p.Needs, []string{"TOKEN"}) {
			t.Fatalf("env %+v needs %v", p.Env, p.Needs)
		}
		if _, err := os.Stat(filepath.Join(dest, "server", "index.js")); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name, url, sha, err string
	}{
		{"a different SHA-256 is refused", srv.URL + "/good.mcpb", strings.Repeat("0", 64), "but the server.json declares " + strings.Repeat("0", 64) + ": refused"},
		{"an entry that leaves the bundle is refused", srv.URL + "/evil.mcpb", sum(evil), `entry "../escape.js" leaves the bundle: refused`},
		{"plain http off the machine is refused", "http://bundles.example/x.mcpb", sum(good), "is not an https URL: refused"},
		{"missing", srv.URL + "/nope.mcpb", sum(good), "HTTP 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := &Plan{Bundle: &Bundle{URL: tc.url, SHA256: tc.sha}}
			err := p.FetchBundle(ctx, nil, dir, none)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if p.Command != "" {
				t.Fatalf("a refused bundle set a command: %q", p.Command)
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Fatalf("a refused bundle left %v", ents)
			}
		})
	}
}
