package app

import (
	"github.com/agent-tools/agent-tools/internal/resultcache"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
)

// A generation is everything built from one config: the registry, the call
// pipeline and the providers they own. The live one is App.live.cur (the
// one source of truth: Config, Registry and Call read it on every use); a
// reload builds the next one and swaps it in, and the previous one is
// closed once the calls running on it have returned.

// generation is the catalog and call path built from one config.
type generation struct {
	cfg        *config.Config
	mode       facade.Mode
	rules      policy.Rules
	access     *policy.Access // profiles and per-identity rules (profiles.go)
	gate       *policy.Gate   // the one access decision over rules and access (policy.Gate)
	reg        *registry.Registry
	call       pipeline.Handler
	closers    []io.Closer
	loadErrors []provider.Diagnostic
	cache      *resultcache.Cache // the cache: section's (nil: none; cache.go)
	log        *slog.Logger
	// deps is what the kinds' builders get from this generation.
	deps provider.Deps
	// onPrompts republishes upstream prompts (the facade's SyncPrompts).
	onPrompts func()
	// startOff are the providers the config (or plugin manifest) declares
	// disabled; unavailable are declared ones that could not be built, with
	// why (they cannot be enabled); started are those whose Start ran.
	startOff    map[string]bool
	unavailable map[string]string
	unbuiltOn   map[string]bool      // unavailable ones declared enabled (a failure, not a choice)
	held        map[string]HeldEntry // registry entries waiting for approval, not built (held.go)
	startedMu   sync.Mutex
	started     map[string]bool
	all         map[string]provider.Provider // every registered provider, enabled or not
	off         *offTools                    // tools of providers disabled at run time

	mu      sync.Mutex
	calls   int    // in flight on this generation
	retired func() // run once retired and idle
	done    bool
}

func (g *generation) acquire() {
	g.mu.Lock()
	g.calls++
	g.mu.Unlock()
}

func (g *generation) release() {
	g.mu.Lock()
	g.calls--
	f := g.idleLocked()
	g.mu.Unlock()
	if f != nil {
		f()
	}
}

// retire runs f (closing the generation's providers) once no call is running on it.
func (g *generation) retire(f func()) {
	g.mu.Lock()
	g.retired = f
	f = g.idleLocked()
	g.mu.Unlock()
	if f != nil {
		f()
	}
}

func (g *generation) idleLocked() func() {
	if g.calls > 0 || g.retired == nil || g.done {
		return nil
	}
	g.done = true
	return g.retired
}

type liveState struct {
	cur     atomic.Pointer[generation]
	mu      sync.Mutex
	retired sync.WaitGroup // closers of retired generations still pending
	closed  bool
}

// close closes the current generation and waits (bounded) for retired ones.
func (l *liveState) close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	g := l.cur.Load()
	if g == nil {
		return nil
	}
	done := make(chan struct{})
	go func() { l.retired.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return closeAll(g.closers)
}
