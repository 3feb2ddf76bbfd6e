package mcpregistry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The table of runtime options (issue 44, item 6): every row names a
// runtime the plan runs, harmless rows have no reason, refused ones do,
// and no option is both.
func TestRuntimeArgRules(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range RuntimeArgRules {
		if r.Runtime != "node" && !strings.Contains(" npx uvx docker dnx ", " "+r.Runtime+" ") {
			t.Errorf("a row for %q, which nothing runs", r.Runtime)
		}
		if r.Why == "" && (r.Refused == nil || r.Refused("host") || r.Refused("0")) {
			t.Errorf("%s %v: a row that refuses needs a reason", r.Runtime, r.Names)
		}
		for _, n := range r.Names {
			if !strings.HasPrefix(n, "-") || strings.Contains(n, "=") {
				t.Errorf("%s %q is not an option name", r.Runtime, n)
			}
			if seen[r.Runtime+" "+n] {
				t.Errorf("%s %s is in two rows", r.Runtime, n)
			}
			seen[r.Runtime+" "+n] = true
		}
	}
}

func TestParseAllowArgs(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string // "" ok
	}{
		{[]string{"--registry=https://x"}, ""},
		{[]string{"-v /:/host", "--privileged"}, ""},
		{[]string{"evil-package@1"}, ""},
		{[]string{""}, "an empty value"},
		{[]string{" --privileged"}, "spaces around"},
		{[]string{"--privileged\t"}, "spaces around"},
		{[]string{"--a\nb"}, "control character or line break"},
		{[]string{"--a\x1bb"}, "control character"},
		{[]string{"--a\x7f"}, "control character"},
		{[]string{strings.Repeat("x", 4097)}, "longer than 4096"},
	} {
		_, err := ParseAllowArgs(c.in)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

func TestRefusedEnvAndHosts(t *testing.T) {
	for _, n := range []string{"NODE_OPTIONS", "node_options", "LD_PRELOAD", "LD_ANYTHING", "DYLD_INSERT_LIBRARIES", "PATH", "npm_config_registry", "UV_INDEX_URL", "BASH_ENV", "ENV"} {
		if RefusedEnv(n) == "" {
			t.Errorf("%s is not refused", n)
		}
	}
	for _, n := range []string{"API_KEY", "NODE_ENV", "HOME_DIR", "PATHS_FILE", "ENVIRONMENT", "LOG_LEVEL"} {
		if why := RefusedEnv(n); why != "" {
			t.Errorf("%s is refused: %s", n, why)
		}
	}
	for u, want := range map[string]string{
		"https://example.com/mcp":          "",
		"http://127.0.0.1:1/mcp":           "",
		"http://127.1.2.3:1/mcp":           "",
		"http://[::1]/mcp":                 "",
		"http://localhost/mcp":             "",
		"https://1.2.3.4/mcp":              "",
		"https://10.1.2.3/mcp":             "",
		"https://1e100.net/":               "",
		"http://example.com/mcp":           "plain http",
		"ftp://example.com/":               "is not https",
		"https://169.254.169.254/":         "link-local",
		"http://169.254.169.254/":          "link-local",
		"https://[fe80::abcd]/":            "link-local",
		"https://metadata/":                "metadata",
		"https://100.100.100.200/":         "metadata",
		"https://169.254.43518/":           "numeric host",
		"https://0x7f000001/":              "numeric host",
		"https://[::ffff:a9fe:a9fe]/":      "link-local",
		"https://instance-data/latest/":    "metadata",
		"https://metadata.google.internal": "metadata",
	} {
		err := CheckRemoteURL(u)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", u, err, want)
		}
	}
}

// A bundle's manifest is checked as a runtime's arguments are: node's
// options before the script, its environment's names; its URL's host.
func TestFetchBundleRefuses(t *testing.T) {
	mk := func(args, env string) []byte {
		return bundleZip(t, map[string]string{"server/index.js": "//", "manifest.json": `{"manifest_version":"0.2","name":"n","version":"1",
			"server":{"type":"node","mcp_config":{"command":"node","args":` + args + `,"env":` + env + `}}}`})
	}
	bundles := map[string][]byte{
		"/require.mcpb": mk(`["--require=/tmp/x.js","${__dirname}/server/index.js"]`, `{}`),
		"/eval.mcpb":    mk(`["-e","require('child_process').exec('x')"]`, `{}`),
		"/preload.mcpb": mk(`["${__dirname}/server/index.js"]`, `{"LD_PRELOAD":"/tmp/x.so"}`),
		"/ok.mcpb":      mk(`["--enable-source-maps","${__dirname}/server/index.js","--require","not node's"]`, `{"NODE_ENV":"production"}`),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(bundles[r.URL.Path]) }))
	defer srv.Close()
	sum := func(p string) string { s := sha256.Sum256(bundles[p]); return hex.EncodeToString(s[:]) }
	none := func(string) (string, bool) { return "", false }
	for path, want := range map[string]string{
		"/require.mcpb": `mcp_config.args "--require=/tmp/x.js" for node: refused: it loads code`,
		"/eval.mcpb":    `mcp_config.args "-e require('child_process').exec('x')" for node: refused: it runs a command or code`,
		"/preload.mcpb": `environmentVariables "LD_PRELOAD": refused`,
		"/ok.mcpb":      "",
	} {
		p := &Plan{Bundle: &Bundle{URL: srv.URL + path, SHA256: sum(path)}}
		err := p.FetchBundle(context.Background(), nil, t.TempDir(), none)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
		if err != nil && p.Command != "" {
			t.Errorf("%s: a refused bundle set a command", path)
		}
	}
	// --allow-args lets the named one through (PlanFor's choice reaches FetchBundle).
	allow, _ := ParseAllowArgs([]string{"--require=/tmp/x.js"})
	p := &Plan{Bundle: &Bundle{URL: srv.URL + "/require.mcpb", SHA256: sum("/require.mcpb")}, allow: allow}
	if err := p.FetchBundle(context.Background(), nil, t.TempDir(), none); err != nil || p.Command != "node" {
		t.Errorf("allowed: %v %q", err, p.Command)
	}
	p = &Plan{Bundle: &Bundle{URL: "https://169.254.169.254/x.mcpb", SHA256: strings.Repeat("0", 64)}}
	if err := p.FetchBundle(context.Background(), nil, t.TempDir(), none); err == nil || !strings.Contains(err.Error(), "link-local") {
		t.Errorf("a link-local bundle URL: %v", err)
	}
}
