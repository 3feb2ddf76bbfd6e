package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/state"
)

// Record is what a replica publishes about itself.
type Record struct {
	ID          string    `json:"id"`
	Started     time.Time `json:"started"`
	CatalogHash string    `json:"catalog_hash"`
	Seen        time.Time `json:"seen"`
}

// SessionRecord is the registry entry of one stateful session.
type SessionRecord struct {
	ID       string    `json:"id"`
	Replica  string    `json:"replica"`
	Owner    string    `json:"owner,omitempty"` // authenticated identity, never a token
	Protocol string    `json:"protocol,omitempty"`
	Client   string    `json:"client,omitempty"`
	Caps     []string  `json:"capabilities,omitempty"`
	Created  time.Time `json:"created"`
}

// Node is this replica's membership: its record, refreshed while Run runs,
// and views of the others'.
type Node struct {
	ID    string
	Store state.Store
	Log   *slog.Logger
	// Catalog returns this replica's current catalog hash.
	Catalog func() string
	// Every is the heartbeat interval (0 = 5s); records live 3 intervals.
	Every time.Duration
	// OnMismatch runs when the cluster's catalog hashes stop or start
	// agreeing with this replica's (the caller re-checks and tells its
	// sessions list_changed).
	OnMismatch func(mismatch []Record)

	started time.Time
	mu      sync.Mutex
	last    []Record // peers that disagreed at the last heartbeat
}

func (n *Node) every() time.Duration {
	if n.Every <= 0 {
		return 5 * time.Second
	}
	return n.Every
}

// Publish writes this replica's record now.
func (n *Node) Publish(ctx context.Context) error {
	if n.started.IsZero() {
		n.started = time.Now()
	}
	r := Record{ID: n.ID, Started: n.started, Seen: time.Now()}
	if n.Catalog != nil {
		r.CatalogHash = n.Catalog()
	}
	b, _ := json.Marshal(r)
	return n.Store.Put(ctx, "replica:"+n.ID, b, 3*n.every())
}

// Run publishes the record every interval until ctx ends, then removes it.
func (n *Node) Run(ctx context.Context) {
	t := time.NewTicker(n.every())
	defer t.Stop()
	for {
		if err := n.Publish(ctx); err != nil && n.Log != nil {
			n.Log.Debug("cluster heartbeat", "err", err)
		}
		if mm, err := n.Mismatch(ctx); err == nil {
			n.noteMismatch(mm)
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), state.OpTimeout)
			_ = n.Store.Delete(dctx, "replica:"+n.ID)
			cancel()
			return
		case <-t.C:
		}
	}
}

func (n *Node) noteMismatch(mm []Record) {
	n.mu.Lock()
	changed := !slices.EqualFunc(mm, n.last, func(a, b Record) bool { return a.ID == b.ID && a.CatalogHash == b.CatalogHash })
	n.last = mm
	n.mu.Unlock()
	if changed && n.OnMismatch != nil {
		n.OnMismatch(mm)
	}
}

// Peers lists the live replicas (this one included once published).
func (n *Node) Peers(ctx context.Context) ([]Record, error) {
	m, err := n.Store.Scan(ctx, "replica:")
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(m))
	for _, b := range m {
		var r Record
		if json.Unmarshal(b, &r) == nil && r.ID != "" {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Mismatch lists the live replicas whose catalog hash differs from this one's.
func (n *Node) Mismatch(ctx context.Context) ([]Record, error) {
	peers, err := n.Peers(ctx)
	if err != nil {
		return nil, err
	}
	mine := ""
	if n.Catalog != nil {
		mine = n.Catalog()
	}
	var out []Record
	for _, p := range peers {
		if p.ID != n.ID && p.CatalogHash != mine {
			out = append(out, p)
		}
	}
	return out, nil
}

// Alive reports whether replica has a live record.
func (n *Node) Alive(ctx context.Context, replica string) bool {
	_, err := n.Store.Get(ctx, "replica:"+replica)
	return err == nil
}

func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "session:" + hex.EncodeToString(sum[:16])
}

// RegisterSession records a stateful session for ttl (the idle timeout).
func (n *Node) RegisterSession(ctx context.Context, r SessionRecord, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	b, _ := json.Marshal(r)
	return n.Store.Put(ctx, sessionKey(r.ID), b, ttl)
}

// Session looks a session up in the registry.
func (n *Node) Session(ctx context.Context, id string) (SessionRecord, bool) {
	b, err := n.Store.Get(ctx, sessionKey(id))
	if err != nil {
		return SessionRecord{}, false
	}
	var r SessionRecord
	return r, json.Unmarshal(b, &r) == nil
}

// ForgetSession removes a session from the registry.
func (n *Node) ForgetSession(ctx context.Context, id string) {
	_ = n.Store.Delete(ctx, sessionKey(id))
}

// CatalogHash fingerprints what a replica serves: every tool's identity,
// canonical name, safety class and schema, plus a digest of the policy and
// mode, so that replicas started from different files are told apart.
func CatalogHash(tools []catalog.Tool, policy string) string {
	lines := make([]string, 0, len(tools))
	for _, t := range tools {
		s := sha256.Sum256(t.InputSchema)
		lines = append(lines, strings.Join([]string{t.Provider, t.Name, t.Canonical, boolStr(t.ReadOnly), boolStr(t.AlwaysConfirm), hex.EncodeToString(s[:8])}, "\x00"))
	}
	sort.Strings(lines)
	h := sha256.New()
	h.Write([]byte(policy))
	for _, l := range lines {
		h.Write([]byte{'\n'})
		h.Write([]byte(l))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
