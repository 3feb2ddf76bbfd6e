package cluster

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/state"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadKey(t *testing.T) {
	long := strings.Repeat("s", 40)
	tests := []struct {
		name       string
		configured string
		env        map[string]string
		wantErr    string
		generated  bool
	}{
		{"configured", long, nil, "", false},
		{"from env", "", map[string]string{EnvKey: long}, "", false},
		{"generated", "", nil, "", true},
		{"too short", "tiny1", nil, "too short: 5 bytes", false},
	}
	for _, tt := range tests {
		k, err := LoadKey(tt.configured, env(tt.env))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), tt.configured) {
				t.Errorf("%s: err = %v", tt.name, err)
			}
			continue
		}
		if err != nil || k.Generated != tt.generated {
			t.Errorf("%s: %v generated=%v", tt.name, err, k.Generated)
		}
	}
	a, _ := LoadKey(long, nil)
	b, _ := LoadKey(long, nil)
	if !bytes.Equal(a.Derive("x"), b.Derive("x")) || bytes.Equal(a.Derive("x"), a.Derive("y")) {
		t.Error("Derive must be deterministic per purpose and differ across purposes")
	}
}

func TestSessions(t *testing.T) {
	k, _ := LoadKey(strings.Repeat("k", 32), nil)
	r1, err := NewSessions("r1", k)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := NewSessions("r2", k)
	id := r1.New()
	if !strings.HasPrefix(id, "r1.") {
		t.Fatalf("id %q does not name its replica", id)
	}
	if owner, err := r2.Owner(id); err != nil || owner != "r1" {
		t.Errorf("r2.Owner = %q, %v", owner, err)
	}
	other, _ := LoadKey(strings.Repeat("o", 32), nil)
	stranger, _ := NewSessions("r1", other)
	for _, bad := range []string{stranger.New(), "r1.abc.def", "", "nodots", strings.Replace(id, "r1.", "r3.", 1)} {
		if _, err := r2.Owner(bad); err == nil {
			t.Errorf("Owner(%q) accepted", bad)
		}
	}
	if _, err := NewSessions("bad id!", k); err == nil {
		t.Error("bad replica id accepted")
	}
}

func FuzzOwner(f *testing.F) {
	k, _ := LoadKey(strings.Repeat("k", 32), nil)
	s, _ := NewSessions("r1", k)
	f.Add(s.New())
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, id string) {
		if owner, err := s.Owner(id); err == nil && owner != "r1" {
			t.Fatalf("forged owner %q from %q", owner, id)
		}
	})
}

func TestReplicaID(t *testing.T) {
	if id := ReplicaID(env(map[string]string{"AGENT_TOOLS_REPLICA_ID": "pod-7"})); id != "pod-7" {
		t.Errorf("id = %q", id)
	}
	a, b := ReplicaID(env(nil)), ReplicaID(env(nil))
	if !ValidReplicaID(a) || a == b {
		t.Errorf("generated ids %q %q", a, b)
	}
}

func TestNodeMismatchAndSessions(t *testing.T) {
	store := state.NewMemory()
	ctx := context.Background()
	hashes := map[string]string{"a": "h1", "b": "h1", "c": "h2"}
	var nodes []*Node
	var seen [][]Record
	for _, id := range []string{"a", "b", "c"} {
		n := &Node{ID: id, Store: store, Catalog: func() string { return hashes[id] }}
		if id == "a" {
			n.OnMismatch = func(mm []Record) { seen = append(seen, mm) }
		}
		if err := n.Publish(ctx); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	peers, _ := nodes[0].Peers(ctx)
	if len(peers) != 3 {
		t.Fatalf("peers = %+v", peers)
	}
	mm, _ := nodes[0].Mismatch(ctx)
	if len(mm) != 1 || mm[0].ID != "c" {
		t.Fatalf("mismatch = %+v", mm)
	}
	nodes[0].noteMismatch(mm)
	nodes[0].noteMismatch(mm) // unchanged: no second callback
	hashes["c"] = "h1"
	if err := nodes[2].Publish(ctx); err != nil {
		t.Fatal(err)
	}
	mm, _ = nodes[0].Mismatch(ctx)
	nodes[0].noteMismatch(mm)
	if len(seen) != 2 || len(seen[1]) != 0 {
		t.Errorf("callbacks = %+v", seen)
	}
	if !nodes[1].Alive(ctx, "c") || nodes[1].Alive(ctx, "zz") {
		t.Error("Alive wrong")
	}
	rec := SessionRecord{ID: "a.x.y", Replica: "a", Owner: "token:ab", Created: time.Now()}
	if err := nodes[0].RegisterSession(ctx, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, ok := nodes[2].Session(ctx, "a.x.y")
	if !ok || got.Owner != "token:ab" || got.Replica != "a" {
		t.Errorf("session = %+v %v", got, ok)
	}
	nodes[0].ForgetSession(ctx, "a.x.y")
	if _, ok := nodes[2].Session(ctx, "a.x.y"); ok {
		t.Error("forgotten session still there")
	}
}

func TestCatalogHash(t *testing.T) {
	a := []catalog.Tool{{Provider: "p", Name: "x", Canonical: "p_x", InputSchema: []byte(`{"type":"object"}`)}, {Provider: "p", Name: "y", Canonical: "p_y"}}
	b := []catalog.Tool{a[1], a[0]}
	if CatalogHash(a, "pol") != CatalogHash(b, "pol") {
		t.Error("order must not matter")
	}
	c := []catalog.Tool{a[0], {Provider: "p", Name: "y", Canonical: "p_y", ReadOnly: true}}
	if CatalogHash(a, "pol") == CatalogHash(c, "pol") || CatalogHash(a, "pol") == CatalogHash(a, "other") {
		t.Error("a safety class or policy change must change the hash")
	}
}
