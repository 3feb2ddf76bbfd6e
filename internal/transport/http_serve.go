package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/pipeline"
)

// Drain tracks the tool calls in flight so that shutdown can wait for them,
// then cancel the rest (their contexts end, and the process-running
// providers kill the process trees). A call still waiting for a person's
// approval is not among those the grace is for: StopWaiting ends it at
// once (SHUTTING_DOWN, nothing ran). Put Middleware in the pipeline, before
// Policy.
type Drain struct {
	mu     sync.Mutex
	n      int
	idle   chan struct{} // closed when n drops to 0; nil while n == 0
	ctx    context.Context
	cancel context.CancelFunc
	// stopping ends when shutdown begins (pipeline.WithStopping).
	stopping  context.Context
	stopWaits context.CancelFunc
}

// NewDrain returns a Drain with nothing in flight.
func NewDrain() *Drain {
	d := &Drain{}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.stopping, d.stopWaits = context.WithCancel(context.Background())
	return d
}

// Middleware counts a call while it runs and ties it to Cancel.
func (d *Drain) Middleware() pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
			d.mu.Lock()
			d.n++
			if d.idle == nil {
				d.idle = make(chan struct{})
			}
			d.mu.Unlock()
			defer func() {
				d.mu.Lock()
				d.n--
				if d.n == 0 {
					close(d.idle)
					d.idle = nil
				}
				d.mu.Unlock()
			}()
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			stop := context.AfterFunc(d.ctx, cancel)
			defer stop()
			return next(pipeline.WithStopping(ctx, d.stopping), req)
		}
	}
}

// InFlight is the number of calls running.
func (d *Drain) InFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// Wait blocks until no call is in flight or ctx ends; it reports whether
// everything finished.
func (d *Drain) Wait(ctx context.Context) bool {
	for {
		d.mu.Lock()
		idle := d.idle
		d.mu.Unlock()
		if idle == nil {
			return true
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return false
		}
	}
}

// StopWaiting ends, at once, every call waiting for a person's approval,
// and every later wait: they fail with SHUTTING_DOWN, having run nothing.
// Calls running are left to finish (Wait, then Cancel).
func (d *Drain) StopWaiting() { d.stopWaits() }

// Cancel ends every call in flight and every later one.
func (d *Drain) Cancel() {
	d.stopWaits()
	d.cancel()
}

// Serve serves on ln until ctx ends, then shuts down gracefully: it stops
// accepting connections and new sessions (readyz turns 503), lets in-flight
// calls finish within the grace period, cancels the rest, closes the
// sessions (ending their SSE streams) and returns. A listener error is returned.
func (h *HTTP) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	h.shutdown(srv)
	<-errc //nolint:errcheck // Serve returns ErrServerClosed once shut down: not an error here
	return nil
}

func (h *HTTP) shutdown(srv *http.Server) {
	start := time.Now()
	h.draining.Store(true)
	h.log.Info("shutting down: no new connections or sessions; waiting for calls in flight", "grace", h.opts.ShutdownGrace)
	shutdownDone := make(chan struct{})
	go func() {
		// Closes the listeners and idle connections; returns once every
		// connection is idle (SSE streams end when their sessions close below).
		_ = srv.Shutdown(context.Background()) // without a deadline it only returns once done
		close(shutdownDone)
	}()
	grace, cancel := context.WithTimeout(context.Background(), h.opts.ShutdownGrace)
	defer cancel()
	if d := h.opts.Drain; d != nil {
		// Nothing runs yet for a call waiting for a person: it ends now
		// (SHUTTING_DOWN) rather than hold the grace, which is for calls
		// running.
		d.StopWaiting()
	}
	finished := true
	busy := h.inPosts.Load() > 0 || (h.opts.Drain != nil && h.opts.Drain.InFlight() > 0)
	if d := h.opts.Drain; d != nil {
		if !d.Wait(grace) {
			finished = false
			h.log.Warn("grace period over: cancelling calls in flight", "calls", d.InFlight())
			d.Cancel()
			c, cc := context.WithTimeout(context.Background(), 5*time.Second)
			d.Wait(c)
			cc()
		}
	}
	// Let responses of finished calls reach their clients, and give those
	// clients a moment to read them before their sessions end.
	if h.waitPosts(grace) || busy {
		time.Sleep(settle)
	}

	var wg sync.WaitGroup
	for _, s := range h.servers() { // /mcp's sessions and every profile's
		for ss := range s.Sessions() {
			wg.Add(1)
			go func() { defer wg.Done(); ss.Close() }()
		}
	}
	closed := make(chan struct{})
	go func() { wg.Wait(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		h.log.Warn("sessions did not close in time")
	}
	select {
	case <-shutdownDone:
	case <-time.After(2 * time.Second):
		srv.Close()
		<-shutdownDone
	}
	h.log.Info("shut down", "took", time.Since(start).Round(time.Millisecond), "all_calls_finished", finished)
}

// settle is the pause between the last response of a call in flight and
// closing the sessions at shutdown.
const settle = 100 * time.Millisecond

// waitPosts waits (polling; shutdown only) for in-flight POST /mcp requests,
// at most a second: requests still open then wait on something other than a
// call (a slow client), and the session close that follows ends them. It
// reports whether any was in flight.
func (h *HTTP) waitPosts(ctx context.Context) bool {
	if h.inPosts.Load() == 0 {
		return false
	}
	deadline := time.Now().Add(time.Second)
	for h.inPosts.Load() > 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
