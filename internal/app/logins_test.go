package app_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/oauth2"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// TestLoginsInRedis: with server.redis, serve's token store is Redis under
// the cluster key, the same store `agent-tools auth` writes (LoginStore):
// a login made there is the one the replica reads.
func TestLoginsInRedis(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	cfg := "server:\n  redis: {url: \"" + srv.URL + "\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) {
		if k == "AGENT_TOOLS_CLUSTER_KEY" {
			return "app-test-cluster-key-0123456789abcdef", true
		}
		return "", false
	}
	a, err := app.New(context.Background(), app.Options{ProjectDir: dir, AuditDefault: io.Discard, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, ok := a.Shared().Logins.(*upstreamauth.RedisStore); !ok {
		t.Fatalf("serve's token store is %T, want the Redis one", a.Shared().Logins)
	}
	cli, closeCLI, err := app.LoginStore(a.Config(), env, "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := closeCLI(); err != nil {
			t.Error(err)
		}
	}()
	if err := cli.Save(&upstreamauth.Entry{Provider: "remote", Token: &oauth2.Token{AccessToken: "x-canary"}}); err != nil {
		t.Fatal(err)
	}
	if e, err := a.Shared().Logins.Load("remote"); err != nil || e == nil || e.Token.AccessToken != "x-canary" {
		t.Fatalf("serve does not see the CLI's login: %v, %v", e, err)
	}
}
