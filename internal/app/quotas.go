package app

import (
	"log/slog"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/quota"
)

// quotaStage is the pipeline's quota stage for the top-level quotas:
// (internal/quota, docs/quotas.md); nil when there are none. The counts of
// this process outlive a reload (Shared.Quotas); with server.redis the
// buckets and token windows are in Redis, shared by every replica.
func quotaStage(cfg *config.Config, s *Shared, log *slog.Logger) pipeline.Middleware {
	if len(cfg.Quotas) == 0 {
		return nil
	}
	o := quota.Options{Quotas: cfg.Quotas, Local: s.Quotas, Log: log}
	if s.Redis != nil {
		o.Redis, o.Prefix = s.Redis.Client(), s.Redis.Prefix()
	}
	return quota.New(o).Stage()
}
