package pipeline

import (
	"context"
	"errors"

	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// ErrShuttingDown is the cause with which a wait for a person's answer
// ends when the server begins to shut down.
var ErrShuttingDown = errors.New("the server is shutting down")

type stoppingKey struct{}

// WithStopping returns ctx carrying stopping, a context that ends when the
// server begins to shut down (the transport's Drain). From then on a call
// waiting for a person's approval (elicitation, the console's queue) ends
// at once with SHUTTING_DOWN, having run nothing, instead of holding the
// shutdown grace, which is for calls already running; a call that reaches
// the question after that moment is not asked.
func WithStopping(ctx, stopping context.Context) context.Context {
	return context.WithValue(ctx, stoppingKey{}, stopping)
}

// personWait is ctx for a wait for a person: it ends, with the cause
// ErrShuttingDown, once the server begins to shut down. done releases it.
func personWait(ctx context.Context) (wctx context.Context, done func()) {
	stopping, _ := ctx.Value(stoppingKey{}).(context.Context)
	if stopping == nil {
		return ctx, func() {}
	}
	wctx, cancel := context.WithCancelCause(ctx)
	if stopping.Err() != nil {
		cancel(ErrShuttingDown) // already: the caller asks nobody (stopped)
		return wctx, func() {}
	}
	stop := context.AfterFunc(stopping, func() { cancel(ErrShuttingDown) })
	return wctx, func() { stop(); cancel(context.Canceled) }
}

// stopped reports whether a wait for a person ended because the server
// began to shut down (or had before it started).
func stopped(wctx context.Context) bool {
	return errors.Is(context.Cause(wctx), ErrShuttingDown)
}

// shuttingDown is the error of a call whose wait for a person the shutdown
// ended: nothing ran.
func shuttingDown(req *Request) *toolerr.Error {
	return toolerr.New(toolerr.ShuttingDown,
		"Nothing ran. Retry the call after the server restarts.",
		"the server is shutting down; %q was waiting for a person's approval and did not run", req.Resolved.Canonical)
}
