package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// TestAuthStatusLogoutRedis: with server.redis, `auth status` and `auth
// logout` work on the logins in Redis (the ones every replica's serve
// uses), not on the user's file; without the cluster key they refuse.
func TestAuthStatusLogoutRedis(t *testing.T) {
	srv := redistest.Start(t)
	dir, stateDir := t.TempDir(), t.TempDir()
	cfgText := "server:\n  redis: {url: \"" + srv.URL + "\"}\nproviders:\n  - id: remote\n    kind: mcp\n    url: http://127.0.0.1:1/mcp\n    auth: {type: oauth}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	withKey := true
	lookup := func(k string) (string, bool) {
		switch k {
		case "XDG_STATE_HOME":
			return stateDir, true
		case "AGENT_TOOLS_CLUSTER_KEY":
			if withKey {
				return "redis-test-cluster-key-0123456789abcdef", true
			}
		}
		return "", false
	}
	cfg, err := app.LoadConfig(app.Options{ProjectDir: dir, Env: lookup})
	if err != nil {
		t.Fatal(err)
	}
	store, closeStore, err := app.LoginStore(cfg, lookup, "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := closeStore(); err != nil {
			t.Error(err)
		}
	}()
	// Another replica's login.
	if err := store.Save(&upstreamauth.Entry{Provider: "remote", Resource: "http://127.0.0.1:1/mcp", Issuer: "https://issuer.test",
		Token: &oauth2.Token{AccessToken: "canary-at", RefreshToken: "canary-rt"}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Run(ctx, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir, LookupEnv: lookup}, args)
		return code, out.String() + errb.String()
	}
	if code, out := run("auth", "status"); code != ExitOK || !strings.Contains(out, "remote: issuer https://issuer.test") || strings.Contains(out, "canary") {
		t.Fatalf("status: %d\n%s", code, out)
	}
	if code, out := run("auth", "logout", "remote"); code != ExitOK || !strings.Contains(out, "Redis (server.redis)") {
		t.Fatalf("logout: %d\n%s", code, out)
	}
	if e, err := store.Load("remote"); e != nil || err != nil {
		t.Fatalf("still in Redis after logout: %v %v", e != nil, err)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "agent-tools", "upstream-tokens.json")); err == nil {
		t.Error("the file store was written")
	}
	withKey = false
	if code, out := run("auth", "status"); code == ExitOK || !strings.Contains(out, "AGENT_TOOLS_CLUSTER_KEY") {
		t.Fatalf("status without a cluster key: %d\n%s", code, out)
	}
}
