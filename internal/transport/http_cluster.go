package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/state"
)

// ClusterOptions connect one replica's transport to the others: session ids
// that name their owner, the session registry, shared rate-limit buckets and
// what /readyz reports.
type ClusterOptions struct {
	// Sessions mints and checks replica-owned session ids (also give its
	// New to the MCP server as its session-id generator).
	Sessions *cluster.Sessions
	// Node is this replica's membership: liveness of the others, the session
	// registry, catalog coherence.
	Node *cluster.Node
	// Store holds rate-limit buckets shared by replicas (nil = per process).
	Store state.Store
	// Check pings the shared state now and says where it lives.
	Check func(ctx context.Context) state.Status
}

// HeaderReplica names the replica that answered (and, on a misrouted
// request, the replica that owns the session).
const HeaderReplica = "X-Agent-Tools-Replica"

// routeSession answers a request whose session another replica owns: 421
// while that replica is alive (the balancer is not routing on
// Mcp-Session-Id), 404 once it is gone (the client initializes again). It
// reports whether the request may go on here.
func (h *HTTP) routeSession(w http.ResponseWriter, r *http.Request, id string) bool {
	c := h.opts.Cluster
	if c == nil || c.Sessions == nil || h.opts.Stateless {
		return true
	}
	owner, err := c.Sessions.Owner(id)
	if err != nil || owner == c.Sessions.Replica {
		return true // unknown ids get the SDK's own 404
	}
	w.Header().Set(HeaderReplica, owner)
	ctx, cancel := context.WithTimeout(r.Context(), state.OpTimeout)
	defer cancel()
	if c.Node != nil && c.Node.Alive(ctx, owner) {
		infoOf(r).reason = "misrouted"
		httpError(w, http.StatusMisdirectedRequest, "this session belongs to replica "+owner+": route requests by their Mcp-Session-Id header (sticky sessions)")
		return false
	}
	infoOf(r).reason = "replica_gone"
	httpError(w, http.StatusNotFound, "session not found: its replica ("+owner+") is gone; initialize a new session")
	return false
}

// registerSession records a session the SDK just created (or forgets one
// the client deleted) in the cluster's registry.
func (h *HTTP) registerSession(w http.ResponseWriter, r *http.Request) {
	c := h.opts.Cluster
	if c == nil || c.Node == nil || h.opts.Stateless {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), state.OpTimeout)
	defer cancel()
	if r.Method == http.MethodDelete {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			c.Node.ForgetSession(ctx, id)
		}
		return
	}
	id := w.Header().Get("Mcp-Session-Id")
	if r.Method != http.MethodPost || id == "" || r.Header.Get("Mcp-Session-Id") != "" {
		return
	}
	rec := cluster.SessionRecord{ID: id, Replica: c.Node.ID, Owner: infoOf(r).user, Created: time.Now().UTC()}
	for ss := range h.opts.Server.Sessions() {
		if ss.ID() != id {
			continue
		}
		if ip := ss.InitializeParams(); ip != nil {
			rec.Protocol = ip.ProtocolVersion
			if ip.ClientInfo != nil {
				rec.Client = ip.ClientInfo.Name
			}
			if cp := ip.Capabilities; cp != nil {
				if cp.Elicitation != nil {
					rec.Caps = append(rec.Caps, "elicitation")
				}
				if cp.Sampling != nil {
					rec.Caps = append(rec.Caps, "sampling")
				}
				if cp.RootsV2 != nil || cp.Roots.ListChanged {
					rec.Caps = append(rec.Caps, "roots")
				}
			}
		}
	}
	_ = c.Node.RegisterSession(ctx, rec, h.opts.SessionTimeout)
}

// allowShared takes a rate-limit token from the buckets replicas share.
func (h *HTTP) allowShared(r *http.Request, key string) (bool, time.Duration, bool) {
	c := h.opts.Cluster
	if c == nil || c.Store == nil || h.limits == nil {
		return false, 0, false
	}
	ok, wait, err := c.Store.Take(r.Context(), "rl:"+key, float64(h.limits.every), h.limits.burst)
	if err != nil {
		return false, 0, false // use the local limiter
	}
	return ok, wait, true
}

// readiness is the body of /readyz.
type readiness struct {
	Status  string           `json:"status"` // ready | degraded | draining | not_ready
	Replica string           `json:"replica,omitempty"`
	Reasons []string         `json:"reasons,omitempty"`
	State   *state.Status    `json:"state,omitempty"`
	Peers   []cluster.Record `json:"mismatched_replicas,omitempty"`
}

// readyz answers 200 ready/degraded (a Redis outage or a catalog mismatch
// never takes every replica out of rotation) and 503 only while draining or
// when the runtime itself cannot serve.
func (h *HTTP) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	out := readiness{Status: "ready"}
	code := http.StatusOK
	c := h.opts.Cluster
	if c != nil && c.Node != nil {
		out.Replica = c.Node.ID
	}
	switch {
	case h.draining.Load():
		out.Status, code = "draining", http.StatusServiceUnavailable
		out.Reasons = append(out.Reasons, "shutting down")
	case h.opts.Ready != nil:
		if err := h.opts.Ready(); err != nil {
			out.Status, code = "not_ready", http.StatusServiceUnavailable
			out.Reasons = append(out.Reasons, err.Error())
		}
	}
	if c != nil && code == http.StatusOK {
		ctx, cancel := context.WithTimeout(r.Context(), 2*state.OpTimeout)
		defer cancel()
		if c.Check != nil {
			st := c.Check(ctx)
			out.State = &st
			if st.Degraded {
				out.Status = "degraded"
				out.Reasons = append(out.Reasons, "shared state unreachable, using local state: "+st.Reason)
			}
		}
		if c.Node != nil {
			if mm, err := c.Node.Mismatch(ctx); err == nil && len(mm) > 0 {
				out.Status, out.Peers = "degraded", mm
				out.Reasons = append(out.Reasons, "catalog differs from other replicas (check that every replica has the same config and files)")
			}
		}
	}
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(out)
}
