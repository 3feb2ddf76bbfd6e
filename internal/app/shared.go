package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/quota"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// LoginsPurpose is the cluster key derivation of the upstream token store.
const LoginsPurpose = "upstream-tokens"

// LoginStore is the upstream token store cfg asks for: with server.redis,
// the logins in Redis sealed under a key derived from the cluster key
// (close it when done); else the user's file store (close is a no-op).
// It is what serve uses and what `agent-tools auth` must write to.
func LoginStore(cfg *config.Config, env func(string) (string, bool), fileDir string) (upstreamauth.WatchStore, func() error, error) {
	if u := cfg.Server.Redis.URL; u != "" {
		key, err := cluster.LoadKey(cfg.Server.ClusterKey, env)
		if err != nil {
			return nil, nil, err
		}
		if key.Generated {
			return nil, nil, fmt.Errorf("server.redis is set but no cluster key is: the logins in Redis are sealed with it; set %s", cluster.EnvKey)
		}
		r, err := state.NewRedis(u, "")
		if err != nil {
			return nil, nil, err
		}
		s, err := upstreamauth.NewRedisStore(r, key.Derive(LoginsPurpose))
		if err != nil {
			r.Close()
			return nil, nil, err
		}
		return s, r.Close, nil
	}
	s, err := upstreamauth.NewFileStore(fileDir)
	if err != nil {
		return nil, nil, err
	}
	return s, func() error { return nil }, nil
}

// Shared is what outlives a configuration reload and, with server.redis,
// what replicas share: the state store (loop-guard counts, rate-limit
// buckets, used confirmation tokens, the session registry), the cluster key
// and this replica's identity. Built once from the first configuration;
// changing server.redis or server.clusterKey needs a restart (logged).
type Shared struct {
	// Store is Redis behind a local fallback when server.redis is set, else memory.
	Store state.Store
	// Signed is Store for the values that grant something — approval
	// entries and answers, remembered decisions, pins, provider toggles
	// and restarts —, sealed under a key derived from the cluster key: a
	// value that does not verify (a plain SET by anyone who can write to
	// Redis) is refused, logged and treated as absent.
	Signed *state.Signed
	// Key signs confirmation tokens and session ids.
	Key cluster.Key
	// Replica names this process in audit records, session ids and /readyz.
	Replica string
	// Tokens is the confirmation-token book every generation uses.
	Tokens *policy.Tokens
	// Sessions mints stateful session ids that name this replica.
	Sessions *cluster.Sessions
	// Redis is the shared store when configured (nil otherwise).
	Redis *state.Redis
	// Logins keeps the upstream logins in Redis, sealed under the cluster
	// key, so every replica uses one login (nil without Redis: the user's
	// file store).
	Logins upstreamauth.WatchStore
	// Changes carries the operator's toggles, restarts and pin approvals
	// to the other replicas (nil without Redis: one process has no others).
	Changes *cluster.Changes
	// Quotas are this process's quota counts (calls in flight, and the
	// buckets and token windows when Redis is not set or not answering),
	// kept across reloads.
	Quotas *quota.Local
	// fallback checks Redis for /readyz (nil without Redis).
	fallback *state.Fallback
}

// newShared builds the shared state from the first configuration.
func newShared(cfg *config.Config, env func(string) (string, bool), log *slog.Logger) (*Shared, error) {
	key, err := cluster.LoadKey(cfg.Server.ClusterKey, env)
	if err != nil {
		return nil, &ConfigError{err}
	}
	s := &Shared{Key: key, Replica: cluster.ReplicaID(env), Quotas: quota.NewLocal()}
	if u := cfg.Server.Redis.URL; u != "" {
		r, err := state.NewRedis(u, "")
		if err != nil {
			return nil, &ConfigError{err}
		}
		fb := state.NewFallback(r, log)
		fb.Check(context.Background()) // logs once if Redis is not there yet
		s.Store, s.Redis, s.fallback = fb, r, fb
		if s.Logins, err = upstreamauth.NewRedisStore(r, key.Derive(LoginsPurpose)); err != nil {
			return nil, &ConfigError{err}
		}
		s.Signed = key.Signed(fb, log)
		s.Changes = &cluster.Changes{Store: s.Signed, Replica: s.Replica, Log: log}
		if key.Generated {
			log.Warn("server.redis is set but no cluster key is: confirmation tokens, session ids, approvals, remembered decisions, pins and toggles of this replica cannot be verified by the others; set " + cluster.EnvKey)
		}
	} else {
		s.Store = state.NewMemory()
		s.Signed = key.Signed(s.Store, log)
	}
	s.Tokens = policy.NewTokensWithKey(key.Derive("confirm-tokens"), s.Store)
	if s.Sessions, err = cluster.NewSessions(s.Replica, key); err != nil {
		return nil, &ConfigError{err}
	}
	return s, nil
}

// Status says where shared state lives right now.
func (s *Shared) Status() state.Status {
	if r, ok := s.Store.(state.Reporter); ok {
		return r.Status()
	}
	return state.Status{Backend: "memory"}
}

// Check pings Redis now (when configured) and says where state lives.
func (s *Shared) Check(ctx context.Context) state.Status {
	if s.fallback != nil {
		return s.fallback.Check(ctx)
	}
	return s.Status()
}

// Node returns this replica's cluster membership, publishing catalog as its
// catalog hash; run it with Node.Run while serving.
func (s *Shared) Node(catalog func() string, log *slog.Logger) *cluster.Node {
	return &cluster.Node{ID: s.Replica, Store: s.Store, Log: log, Catalog: catalog}
}

// CatalogHash fingerprints the live catalog and policy (see cluster.CatalogHash).
func (a *App) CatalogHash() string {
	g := a.current()
	pol, _ := json.Marshal(struct {
		Mode   any
		Policy config.Policy
	}{g.mode, g.cfg.Policy})
	return cluster.CatalogHash(g.reg.Tools(""), string(pol))
}

// Close releases the Redis connections.
func (s *Shared) Close() error {
	if s.Redis != nil {
		return s.Redis.Close()
	}
	return nil
}

// Shared returns the state shared across reloads (and replicas).
func (a *App) Shared() *Shared { return a.shared }

// sealed is the shared store whose values carry the cluster key's MAC
// (nil without server.redis).
func (s *Shared) sealed() state.Store {
	if s.Signed == nil {
		return nil
	}
	return s.Signed
}
