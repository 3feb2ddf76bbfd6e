package upstreamauth

import (
	"context"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
)

func redisStore(t *testing.T, url, clusterKey string) *RedisStore {
	t.Helper()
	r, err := state.NewRedis(url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	k, err := cluster.LoadKey(clusterKey, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewRedisStore(r, k.Derive("upstream-tokens"))
	if err != nil {
		t.Fatal(err)
	}
	s.PollEvery = 20 * time.Millisecond
	return s
}

// Two replicas sharing one Redis and one cluster key see one login, and
// the second one's watcher hears of it; a replica with another cluster
// key cannot decrypt it, and Redis holds no readable token.
func TestRedisStoreSharedLogin(t *testing.T) {
	srv := redistest.Start(t)
	const key = "0123456789abcdef0123456789abcdef-cluster"
	a, b := redisStore(t, srv.URL, key), redisStore(t, srv.URL, key)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := make(chan string, 4)
	if err := b.Watch(ctx, func(p string) { heard <- p }); err != nil {
		t.Fatal(err)
	}

	tok := &oauth2.Token{AccessToken: "at-shared-secret-1", RefreshToken: "rt-shared-secret-1"}
	if err := a.Save(&Entry{Provider: "remote", Resource: "https://mcp.example/mcp", Token: tok}); err != nil {
		t.Fatal(err)
	}
	got, err := b.Load("remote")
	if err != nil || got == nil || got.Token.AccessToken != tok.AccessToken {
		t.Fatalf("replica b: %+v, %v", got, err)
	}
	select {
	case p := <-heard:
		if p != "remote" {
			t.Fatalf("watch said %q", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("replica b's watcher did not hear of the login")
	}
	if l, err := b.List(); err != nil || len(l) != 1 {
		t.Fatalf("list: %v, %v", l, err)
	}

	// What Redis holds is sealed.
	raw, err := state.NewRedis(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	all, err := raw.Scan(ctx, redisPrefix)
	if err != nil || len(all) != 1 {
		t.Fatalf("scan: %v, %v", all, err)
	}
	for _, v := range all {
		if strings.Contains(string(v), "shared-secret") {
			t.Fatal("Redis holds a readable token")
		}
	}

	wrong := redisStore(t, srv.URL, "another-cluster-key-another-cluster-key")
	if e, err := wrong.Load("remote"); err == nil || e != nil {
		t.Fatalf("another cluster key decrypted the login: %+v, %v", e, err)
	} else if strings.Contains(err.Error(), "shared-secret") {
		t.Fatal("the error shows the token")
	}

	if err := b.Delete("remote"); err != nil {
		t.Fatal(err)
	}
	if e, err := a.Load("remote"); e != nil || err != nil {
		t.Fatalf("after logout on b, a still has %+v, %v", e, err)
	}
}

func TestNewRedisStoreKeyLength(t *testing.T) {
	if _, err := NewRedisStore(nil, make([]byte, 16)); err == nil {
		t.Fatal("a 16-byte key was accepted")
	}
}
