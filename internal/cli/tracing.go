package cli

import (
	"context"
	"log/slog"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/tracing"
)

// startTracing turns OpenTelemetry traces on when the OTEL_* environment
// asks for them (internal/tracing). The tracer is nil when they are off; stop
// flushes what is queued, bounded, and is never nil. A tracing problem is
// logged, never fatal: traces are an aid, not a reason to refuse to serve.
func startTracing(ctx context.Context, env *Env, log *slog.Logger) (pipeline.Tracer, func()) {
	tc, err := tracing.Setup(ctx, env.LookupEnv, app.Version(), log)
	if err != nil {
		log.Warn("OpenTelemetry traces are off", "err", err)
		return nil, func() {}
	}
	return tc.Tracer(), func() {
		if err := tc.Shutdown(ctx); err != nil {
			log.Warn("OpenTelemetry", "err", err)
		}
	}
}

// tracesDiag is doctor's line on traces; a setting we cannot honour
// (a gRPC endpoint, say) is a warning.
func tracesDiag(env *Env) (tracing.State, provider.Diagnostic) {
	st := tracing.Detect(env.LookupEnv)
	d := provider.Diagnostic{Provider: "server", Item: "traces", Status: "ok", Reason: st.String()}
	if st.Problem != "" {
		d.Status = "warning"
	}
	return st, d
}
