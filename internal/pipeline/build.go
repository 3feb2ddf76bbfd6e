package pipeline

import (
	"io"
	"time"

	"github.com/agent-tools/agent-tools/internal/policy"
)

// Options configure the standard pipeline.
type Options struct {
	Catalog Catalog
	Rules   policy.Rules
	Guard   *policy.LoopGuard
	// Tokens backs token-mode confirmations (default: a fresh book).
	Tokens  *policy.Tokens
	Execute ExecuteOptions
	AuditTo io.Writer // nil: no audit log
	Now     func() time.Time
	// Extra middleware runs between Audit and LoopGuard (metrics, tracing, logging).
	Extra []Middleware
	// Replica names this process in audit records ("" for a single instance).
	Replica string
}

// New assembles the pipeline in the documented order.
func New(o Options) Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Guard == nil {
		o.Guard = policy.NewLoopGuard()
	}
	if o.Tokens == nil {
		o.Tokens = policy.NewTokens()
	}
	if o.AuditTo == io.Discard {
		o.AuditTo = nil // skip encoding records nobody reads
	}
	mw := []Middleware{audit(o.AuditTo, o.Now, o.Replica)}
	mw = append(mw, o.Extra...)
	mw = append(mw, LoopGuard(o.Guard), Resolve(o.Catalog), Validate(), Policy(o.Rules, o.Tokens), Execute(o.Execute))
	return Chain(nil, mw...)
}
