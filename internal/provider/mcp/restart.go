package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// The operator's side of the upstream's life: a restart on request (the
// console's Restart button), the restart count, and where the upstream is
// (starting, failed, the last error) for the console and runtime_status.

// errRestarted is why a session ended by Restart ended: calls in flight on
// it fail with PROVIDER_UNAVAILABLE naming it.
var errRestarted = errors.New("the upstream was restarted by the operator")

// startingError is what Tools returns while the first start is still in
// flight: not a failure (provider.ErrStarting), only a slow upstream.
type startingError struct{ id string }

func (e startingError) Error() string {
	return fmt.Sprintf("upstream %q is still starting; its tools appear when it is ready", e.id)
}

func (startingError) Is(target error) bool { return target == provider.ErrStarting }

// Restart ends the upstream's sessions and starts a fresh one, the way the
// liveness recycling does (liveness.go) but at once, without backoff: the
// operator asked. A stdio child's whole process group is killed (no grace:
// a restart is usually asked of an upstream that misbehaves); an HTTP
// session is dropped. Calls in flight on them fail with
// PROVIDER_UNAVAILABLE; calls arriving meanwhile wait for the new session.
// Passthrough sessions end too (their next call opens a new one). The new
// session re-lists the tools, and OnChange is told when they changed (the
// runtime then tells every client list_changed). A start already in flight
// is not interrupted: its session is the fresh one, and it is waited for.
func (p *Provider) Restart(ctx context.Context) error {
	p.mu.Lock()
	switch p.state {
	case stateClosed:
		p.mu.Unlock()
		return errClosed(p.opts.ID)
	case stateStarting:
		wait := p.starting
		p.mu.Unlock()
		return p.awaitStart(ctx, wait)
	}
	old := p.sess
	open := make([]*session, 0, len(p.open))
	for _, o := range p.open {
		open = append(open, o)
	}
	if p.timer != nil { // a pending automatic restart is this one now
		p.timer.Stop()
		p.timer = nil
	}
	// Starting from here: calls wait for the new session instead of using
	// the old one or starting another upstream while the old one is killed.
	done := make(chan struct{})
	p.sess, p.state, p.starting = nil, stateStarting, done
	p.failures, p.nextTry = 0, time.Time{}
	p.restarts++
	p.mu.Unlock()
	p.log.Info("restarting upstream on request")

	// End the old sessions before starting the new one: an upstream that
	// holds something exclusive (a lock file, a port) must be gone first.
	var wg sync.WaitGroup
	for _, s := range append(open, old) {
		if s == nil {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); s.end(errRestarted, 0) }()
	}
	wg.Wait()

	p.mu.Lock()
	if p.state == stateClosed { // Close ran meanwhile: it ended everything
		p.mu.Unlock()
		close(done)
		return errClosed(p.opts.ID)
	}
	p.bg.Add(1) // under p.mu, before Close can wait for p.bg
	p.mu.Unlock()
	go func() {
		defer p.bg.Done()
		p.connect(done)
	}()
	return p.awaitStart(ctx, done)
}

// awaitStart waits for the start that closes done and says how it ended.
func (p *Provider) awaitStart(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case stateRunning:
		return nil
	case stateClosed:
		return errClosed(p.opts.ID)
	}
	return p.unavailableLocked()
}

// Restarts counts the restarts begun: the operator's (Restart) and the
// automatic ones after a crash or a hung upstream.
func (p *Provider) Restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// Lifecycle reports where the upstream is: starting, failed (no session
// now), and its last error, kept after it recovered.
func (p *Provider) Lifecycle() provider.LifecycleState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := provider.LifecycleState{Starting: p.state == stateStarting, Failed: p.state == stateFailed}
	st.NeedsLogin = st.Failed && needsLogin(p.lastErr)
	if p.lastErr != nil {
		st.LastError, st.LastErrorAt = p.scrubErr(p.lastErr).Error(), p.lastErrAt
	}
	return st
}
