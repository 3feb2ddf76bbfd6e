package app

import (
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/resultguard"
)

// resultGuard is the pipeline's result guard stage for security.results
// (docs/result-guard.md); nil when it has nothing to do (scan: off and no
// spotlight). The config validated the mode.
func resultGuard(r config.Results) pipeline.Middleware {
	mode, _ := resultguard.ParseMode(r.ScanMode())
	return resultguard.New(resultguard.Options{Mode: mode, Spotlight: r.Spotlight}).Stage()
}
