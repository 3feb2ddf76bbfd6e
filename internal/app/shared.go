package app

import (
	"context"
	"log/slog"

	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/state"
)

// Shared is what outlives a configuration reload and, with server.redis,
// what replicas share: the state store (loop-guard counts, rate-limit
// buckets, used confirmation tokens, the session registry), the cluster key
// and this replica's identity. Built once from the first configuration;
// changing server.redis or server.clusterKey needs a restart (logged).
type Shared struct {
	// Store is Redis behind a local fallback when server.redis is set, else memory.
	Store state.Store
	// Key signs confirmation tokens and session ids.
	Key cluster.Key
	// Replica names this process in audit records, session ids and /readyz.
	Replica string
	// Tokens is the confirmation-token book every generation uses.
	Tokens *policy.Tokens
	// Redis is the shared store when configured (nil otherwise).
	Redis *state.Redis
}

// newShared builds the shared state from the first configuration.
func newShared(cfg *config.Config, env func(string) (string, bool), log *slog.Logger) (*Shared, error) {
	key, err := cluster.LoadKey(cfg.Server.ClusterKey, env)
	if err != nil {
		return nil, &ConfigError{err}
	}
	s := &Shared{Key: key, Replica: cluster.ReplicaID(env)}
	if u := cfg.Server.Redis.URL; u != "" {
		r, err := state.NewRedis(u, "")
		if err != nil {
			return nil, &ConfigError{err}
		}
		fb := state.NewFallback(r, log)
		fb.Check(context.Background()) // logs once if Redis is not there yet
		s.Store, s.Redis = fb, r
		if key.Generated {
			log.Warn("server.redis is set but no cluster key is: confirmation tokens and session ids of this replica cannot be verified by the others; set " + cluster.EnvKey)
		}
	} else {
		s.Store = state.NewMemory()
	}
	s.Tokens = policy.NewTokensWithKey(key.Derive("confirm-tokens"), s.Store)
	return s, nil
}

// Status says where shared state lives right now.
func (s *Shared) Status() state.Status {
	if r, ok := s.Store.(state.Reporter); ok {
		return r.Status()
	}
	return state.Status{Backend: "memory"}
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
