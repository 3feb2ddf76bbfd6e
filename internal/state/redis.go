package state

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store in Redis, shared by every replica that uses the same
// server and Prefix. Each multi-step operation is one Lua script, so it is
// atomic on the server.
type Redis struct {
	client *redis.Client
	prefix string
	where  string // host:port, for messages (never the URL's credentials)

	mu     sync.Mutex
	subs   map[*redis.PubSub]bool // Listen's subscriptions, closed by Close
	closed bool
}

var _ Store = (*Redis)(nil)
var _ Reporter = (*Redis)(nil)
var _ Bus = (*Redis)(nil)

// DefaultPrefix namespaces every key the runtime writes.
const DefaultPrefix = "agent-tools:"

// NewRedis connects lazily to rawURL (redis://[user:password@]host:port/db or
// rediss:// for TLS). It fails only on a URL that cannot work; reachability
// is checked by Ping.
func NewRedis(rawURL, prefix string) (*Redis, error) {
	silence.Do(func() { redis.SetLogger(quiet{}) })
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("server.redis.url: %s", scrubURLError(rawURL, err))
	}
	opt.DialTimeout = time.Second
	opt.ReadTimeout = OpTimeout
	opt.WriteTimeout = OpTimeout
	opt.MaxRetries = 0 // the caller falls back instead of waiting on retries
	opt.PoolSize = 16
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Redis{client: redis.NewClient(opt), prefix: prefix, where: opt.Addr}, nil
}

// scrubURLError keeps the URL (which may hold a password) out of the
// message: only the parser's reason is kept.
func scrubURLError(raw string, err error) string {
	msg := err.Error()
	for _, s := range []string{strconv.Quote(raw), raw} {
		msg = strings.ReplaceAll(msg, s, "the URL")
	}
	if u, perr := url.Parse(raw); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "***")
		}
	}
	return msg + " (want redis://[user:password@]host:port/db or rediss://…)"
}

// quiet keeps go-redis's own pool messages off the process's standard
// logger: reachability problems are reported once, by Fallback.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

var silence sync.Once

// Addr is the server's host:port.
func (r *Redis) Addr() string { return r.where }

// Status implements Reporter.
func (r *Redis) Status() Status { return Status{Backend: "redis", Shared: true} }

// Ping checks that the server answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis %s: %w", r.where, err)
	}
	return nil
}

// Close ends every Listen and closes the connection pool.
func (r *Redis) Close() error {
	r.mu.Lock()
	r.closed = true
	for ps := range r.subs {
		_ = ps.Close()
	}
	r.subs = nil
	r.mu.Unlock()
	return r.client.Close()
}

func (r *Redis) k(key string) string { return r.prefix + key }

var incrScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`)

// Incr implements Store.
func (r *Redis) Incr(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	return incrScript.Run(ctx, r.client, []string{r.k(key)}, ttl.Milliseconds()).Int64()
}

// Count implements Store.
func (r *Redis) Count(ctx context.Context, key string) (int64, error) {
	n, err := r.client.Get(ctx, r.k(key)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// Delete implements Store.
func (r *Redis) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = r.k(k)
	}
	return r.client.Del(ctx, full...).Err()
}

// Once implements Store.
func (r *Redis) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		ttl = time.Hour
	}
	return r.client.SetNX(ctx, r.k(key), 1, ttl).Result()
}

// Claim implements Store (SET NX with the value).
func (r *Redis) Claim(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	return r.client.SetNX(ctx, r.k(key), value, max(ttl, 0)).Result()
}

// busChannel is a topic's Redis channel, namespaced like the keys.
func (r *Redis) busChannel(topic string) string { return r.k("bus:" + topic) }

// Publish implements Bus (PUBLISH).
func (r *Redis) Publish(ctx context.Context, topic, msg string) error {
	return r.client.Publish(ctx, r.busChannel(topic), msg).Err()
}

// Listen implements Bus with a SUBSCRIBE on a connection of its own, which
// go-redis pings every few seconds and re-subscribes after a reconnect
// (messages published meanwhile are lost: listeners poll too).
func (r *Redis) Listen(ctx context.Context, topic string, f func(msg string)) {
	go func() {
		// Subscribing dials at once when it can; when Redis is away, the
		// channel's own loop dials and subscribes until it answers.
		ps := r.client.Subscribe(context.WithoutCancel(ctx), r.busChannel(topic))
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			_ = ps.Close()
			return
		}
		if r.subs == nil {
			r.subs = map[*redis.PubSub]bool{}
		}
		r.subs[ps] = true
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			if r.subs[ps] {
				delete(r.subs, ps)
				_ = ps.Close()
			}
			r.mu.Unlock()
		}()
		ch := ps.Channel()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-ch:
				if !ok {
					return // closed by Close
				}
				f(m.Payload)
			}
		}
	}()
}

// takeScript is a token bucket kept in a hash {tokens, ts}, refilled from
// the server's own clock so that replicas with skewed clocks agree.
var takeScript = redis.NewScript(`
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1])
local ts = tonumber(b[2])
if tokens == nil then tokens = burst; ts = now end
tokens = math.min(burst, tokens + (now - ts) / 1000 * rate)
local ok = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
else
  wait = math.ceil((1 - tokens) / rate * 1000)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {ok, wait}`)

// Take implements Store.
func (r *Redis) Take(ctx context.Context, key string, rate float64, burst int) (bool, time.Duration, error) {
	if rate <= 0 {
		return true, 0, nil
	}
	if burst < 1 {
		burst = 1
	}
	res, err := takeScript.Run(ctx, r.client, []string{r.k(key)}, strconv.FormatFloat(rate, 'f', -1, 64), burst).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("redis token bucket: unexpected reply %v", res)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Millisecond, nil
}

// Put implements Store.
func (r *Redis) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return r.client.Set(ctx, r.k(key), value, max(ttl, 0)).Err()
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.client.Get(ctx, r.k(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, err
}

// Scan implements Store. It walks SCAN MATCH with a bounded number of
// rounds: the sets it is for (replica records, waiting approvals, the
// providers' run-time choices) are small, but SCAN visits the whole
// keyspace, so each round asks for 1000 keys to keep the round trips few.
func (r *Redis) Scan(ctx context.Context, prefix string) (map[string][]byte, error) {
	out := map[string][]byte{}
	var cursor uint64
	pattern := r.k(escapeGlob(prefix)) + "*"
	for range 1000 {
		keys, next, err := r.client.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return nil, err
		}
		if len(keys) > 0 {
			vals, err := r.client.MGet(ctx, keys...).Result()
			if err != nil {
				return nil, err
			}
			for i, v := range vals {
				if s, ok := v.(string); ok {
					out[strings.TrimPrefix(keys[i], r.prefix)] = []byte(s)
				}
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	return out, nil
}

// escapeGlob escapes SCAN MATCH metacharacters.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
