package state

import "github.com/redis/go-redis/v9"

// Client is the connection pool, for a package that keeps its own keys in
// the same Redis with a library of its own (internal/quota's GCRA buckets);
// such keys start with Prefix too.
func (r *Redis) Client() *redis.Client { return r.client }

// Prefix is the namespace every key of r starts with.
func (r *Redis) Prefix() string { return r.prefix }
