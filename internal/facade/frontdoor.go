package facade

import (
	"context"
	"encoding/json"

	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
)

// Caller describes a call that arrives outside the MCP meta-tools: the
// CLI's `call`, the public package's in-process Session, the console.
type Caller struct {
	Session, Client, Identity string
	// Door is where the call came in (policy.DoorCLI, DoorSession,
	// DoorConsole): data for the gate and the audit.
	Door policy.Door
	// Via names the front door in the audit ("cli", "in-process").
	Via string
	// Tool is the name as the caller wrote it.
	Tool string
	// Args are the tool's arguments, possibly carrying ConfirmArg (true, or
	// the one-time token of a CONFIRMATION_REQUIRED error under confirm:
	// token) as flat mode's do: the retry every front door teaches.
	Args json.RawMessage
	// Shape renders the retry in the front door's own terms.
	Shape pipeline.Shape
	// Human is a person's confirmation given out of band (`call --confirm`,
	// the console's tick box): it confirms in every policy mode.
	Human bool
	// AskHuman asks a person (an embedder's own dialog); nil: nobody.
	AskHuman func(ctx context.Context, message string) (policy.Approval, error)
}

// Request builds the pipeline request of a Caller with the same
// confirmation parser as flat mode's tools (a boolean, or the token in
// token mode; anything else is an INVALID_ARGUMENTS that teaches) and the
// same teaching for a name that misses as MCP calls get. Every front door
// outside MCP uses it, so a retry one of them teaches works in all of them.
func (f *Facade) Request(c Caller) *pipeline.Request {
	req := &pipeline.Request{Caller: policy.Caller{Session: c.Session, Client: c.Client, Identity: c.Identity, Door: c.Door}, Via: c.Via, Tool: c.Tool, Shape: c.Shape}
	req.Profile = f.opts.Profile // the profile this facade serves (serve --profile): the same view as its MCP calls
	if req.Identity == "" {
		req.Identity = processIdentity // the CLI, an embedder: this process's user
	}
	var confirm any
	req.Args, confirm = splitConfirm(c.Args, true)
	req.AskHuman = c.AskHuman
	if c.Human {
		req.AskHuman = func(context.Context, string) (policy.Approval, error) { return policy.ApprovedOnce, nil }
	}
	f.Teach(req) // a name from another mode, scheme or provider points at the right one
	if e := setConfirm(req, confirm, c.Via, f.tokenMode()); e != nil && req.Malformed == nil {
		req.Malformed = e
	}
	return req
}
