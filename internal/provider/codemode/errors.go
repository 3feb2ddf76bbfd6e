package codemode

import (
	"context"
	"errors"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// CallError turns a ToolCaller's error into an envelope; whose names the
// deadline in messages ("the skill's").
func CallError(ctx context.Context, name string, err error, whose string) *toolerr.Error {
	if te, ok := toolerr.As(err); ok {
		return te
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return toolerr.New(toolerr.Timeout, "", "call to %q did not finish before %s deadline", name, whose)
	case errors.Is(err, context.Canceled):
		return toolerr.New(toolerr.Cancelled, "", "call to %q was cancelled", name)
	}
	return toolerr.New(toolerr.BackendError, "", "call to %q failed: %v", name, err)
}

// BackendError mirrors the pipeline's envelope for a tool's own failure
// (the error tools.call throws for a result the tool marked as an error).
func BackendError(res *provider.Result) *toolerr.Error {
	e := toolerr.New(toolerr.BackendError, "The tool ran and reported a failure; read `output`.", "the tool reported an error")
	for k, v := range res.Details {
		e.With(k, v)
	}
	return e.With("output", res.Text)
}
