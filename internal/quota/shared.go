package quota

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/state"
)

// shared keeps buckets (GCRA, redis_rate) and token windows in Redis. Every
// operation is bounded by state.OpTimeout; an error makes the caller use
// its local state for that call, logged once per outage.
type shared struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
	prefix  string
	log     *slog.Logger
	down    atomic.Bool
}

func newShared(c *redis.Client, prefix string, log *slog.Logger) *shared {
	if prefix == "" {
		prefix = state.DefaultPrefix
	}
	return &shared{client: c, limiter: redis_rate.NewLimiter(c), prefix: prefix, log: log}
}

// note logs the first failure of an outage and the recovery.
func (s *shared) note(err error) error {
	switch {
	case err != nil && !s.down.Swap(true):
		s.log.Warn("quotas: Redis unreachable, counting on this replica only until it answers", "err", err)
	case err == nil && s.down.Swap(false):
		s.log.Info("quotas: Redis answers again, quotas are shared")
	}
	return err
}

func (s *shared) take(ctx context.Context, key string, per config.PerPeriod, burst int) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, state.OpTimeout)
	defer cancel()
	res, err := s.limiter.Allow(ctx, s.prefix+key, redis_rate.Limit{Rate: int(per.N), Burst: burst, Period: per.Period})
	if s.note(err) != nil {
		return false, 0, err
	}
	if res.Allowed > 0 {
		return true, 0, nil
	}
	wait := res.RetryAfter
	if wait < 0 { // redis_rate: -1 when the request can never be allowed
		wait = per.Period
	}
	return false, wait, nil
}

func (s *shared) used(ctx context.Context, key string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, state.OpTimeout)
	defer cancel()
	n, err := s.client.Get(ctx, s.prefix+key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, s.note(nil)
	}
	return n, s.note(err)
}

func (s *shared) add(ctx context.Context, key string, n int64, period time.Duration) error {
	// A call that returned after its caller left still counts.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), state.OpTimeout)
	defer cancel()
	k := s.prefix + key
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.IncrBy(ctx, k, n)
		p.PExpire(ctx, k, period+time.Minute) // the window's key outlives its window a little, never forever
		return nil
	})
	return s.note(err)
}
