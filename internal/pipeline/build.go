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
	// Access holds profiles and per-identity rules (nil: none).
	Access *policy.Access
	// Gate is the one access decision; nil builds one from Rules and
	// Access with the default operator role.
	Gate  *policy.Gate
	Guard *policy.LoopGuard
	// Quota checks the caller's quotas right after Access (internal/quota:
	// rate, concurrent calls, result tokens); nil leaves the stage out.
	Quota Middleware
	// Tokens backs token-mode confirmations (default: a fresh book).
	Tokens *policy.Tokens
	// Decisions are a person's remembered confirmations (nil: none).
	Decisions Decisions
	Execute   ExecuteOptions
	AuditTo   io.Writer // nil: no audit log
	Now       func() time.Time
	// Extra middleware runs between Audit and LoopGuard (metrics, tracing, logging).
	Extra []Middleware
	// Replica names this process in audit records ("" for a single instance).
	Replica string
	// Tracer observes the call and each named stage (internal/tracing);
	// nil wraps nothing, so with tracing off the handler is exactly the
	// chain of stages.
	Tracer Tracer
	// ResultGuard reads what Execute returns before any stage above does
	// (internal/resultguard: warn, redact, block, spotlight); nil leaves
	// the stage out. The pipeline knows only that it is a middleware.
	ResultGuard Middleware
	// ResultCache answers a repeated read-only call from a kept result
	// (internal/resultcache), between ResultGuard and Execute: below every
	// decision, and the guard reads a hit as it reads a fresh result; nil
	// leaves the stage out.
	ResultCache Middleware
}

// Stage names, as a Tracer sees them (and as the trace spans are named).
const (
	StageAudit     = "audit"
	StageLoopGuard = "loop_guard"
	StageResolve   = "resolve"
	StageAccess    = "access"
	StageValidate  = "validate"
	StagePolicy    = "policy"
	StageExecute   = "execute"
	// StageQuota is between Access and Validate, when configured.
	StageQuota = "quota"
	// StageResultGuard is between Policy and Execute, when configured.
	StageResultGuard = "result_guard"
	// StageResultCache is between ResultGuard and Execute, when configured.
	StageResultCache = "result_cache"
)

// Tracer observes calls without this package knowing how: internal/tracing
// implements it over OpenTelemetry, so the pipeline imports no tracing
// library. Call wraps the whole call (outside Audit); Stage wraps the
// handler that runs one named stage and everything below it, so stage spans
// nest in the documented order. Extra middleware is not a stage: it runs
// inside the audit stage.
type Tracer interface {
	Call(next Handler) Handler
	Stage(name string, next Handler) Handler
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
	if o.Gate == nil {
		o.Gate = policy.NewGate(o.Rules, o.Access, nil)
	}
	if o.AuditTo == io.Discard {
		o.AuditTo = nil // skip encoding records nobody reads
	}
	if o.Tracer == nil {
		mw := []Middleware{audit(o.AuditTo, o.Now, o.Replica), capAnswer(o.Execute.MaxResultChars)}
		mw = append(mw, o.Extra...)
		mw = append(mw, LoopGuard(o.Guard), Resolve(o.Catalog, o.Gate), Access(o.Gate, o.Catalog))
		if o.Quota != nil {
			mw = append(mw, o.Quota)
		}
		mw = append(mw, Validate(), Policy(o.Tokens, o.Decisions))
		if o.ResultGuard != nil {
			mw = append(mw, o.ResultGuard)
		}
		if o.ResultCache != nil {
			mw = append(mw, o.ResultCache)
		}
		mw = append(mw, Execute(o.Execute))
		return Chain(nil, mw...)
	}
	// The same chain, each named stage wrapped by the tracer (inside out).
	below := []stage{{StageLoopGuard, LoopGuard(o.Guard)}, {StageResolve, Resolve(o.Catalog, o.Gate)}, {StageAccess, Access(o.Gate, o.Catalog)}}
	if o.Quota != nil {
		below = append(below, stage{StageQuota, o.Quota})
	}
	below = append(below, stage{StageValidate, Validate()}, stage{StagePolicy, Policy(o.Tokens, o.Decisions)})
	if o.ResultGuard != nil {
		below = append(below, stage{StageResultGuard, o.ResultGuard})
	}
	if o.ResultCache != nil {
		below = append(below, stage{StageResultCache, o.ResultCache})
	}
	below = append(below, stage{StageExecute, Execute(o.Execute)})
	var h Handler
	for i := len(below) - 1; i >= 0; i-- {
		h = o.Tracer.Stage(below[i].name, below[i].mw(h))
	}
	h = Chain(h, o.Extra...)
	h = capAnswer(o.Execute.MaxResultChars)(h)
	h = o.Tracer.Stage(StageAudit, audit(o.AuditTo, o.Now, o.Replica)(h))
	return o.Tracer.Call(h)
}

type stage struct {
	name string
	mw   Middleware
}
