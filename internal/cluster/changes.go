package cluster

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/state"
)

// Changes carries an operator's changes to what the replicas serve — a
// provider switched on or off, an upstream restarted, a pin approved — from
// the replica where they were made (its console, the CLI) to every other
// one, which applies them and tells its own sessions list_changed.
//
// Keys, under the store's own prefix:
//
//	catalog:gen                a counter bumped after every change
//	catalog:enabled:<id>       "1" or "0": the cluster's run-time choice for
//	                           a provider; it never expires, so a replica
//	                           started later (a scale-up, a restart) serves
//	                           what the others do
//	catalog:restart:<id>       the last restart asked for ({"id", "by"})
//
// Each replica's Watch reads catalog:gen when the bus (Redis pub/sub) says
// it moved, and on a poll every Poll in any case; when it moved, it reads
// the choices and restarts and hands them to apply. A change is written
// before the counter is bumped, so whoever sees the new count reads it.
//
// The choices and restarts are sealed with the cluster key (Store is a
// state.Signed): one that does not verify — a plain SET by anyone who can
// write to Redis — is refused and treated as absent, so writing to Redis
// switches no provider on or off and restarts none. The counter is not
// sealed: bumping it only makes the replicas read the sealed values again.
type Changes struct {
	// Store is a *state.Signed (cluster.Key.Signed), or a *state.Memory
	// of this process alone: the choices and restarts are neither written
	// to nor read from any other store (ErrUnsealed). Bump, which writes
	// no value, works on any store.
	Store state.Store
	// Replica is this process's id: it does not restart again what it
	// restarted itself.
	Replica string
	// Poll bounds how long a change can go unnoticed when its message is
	// lost (0 = DefaultChangesPoll).
	Poll time.Duration
	Log  *slog.Logger

	mu       sync.Mutex
	primed   bool // the state was read once (the First change went out)
	gen      int64
	restarts map[string]string // provider -> id of the last restart seen
}

// DefaultChangesPoll is how often a replica reads catalog:gen.
const DefaultChangesPoll = 500 * time.Millisecond

const (
	changesTopic  = "catalog"
	genKey        = "catalog:gen"
	enabledPrefix = "catalog:enabled:"
	restartPrefix = "catalog:restart:"
)

// Change is what Watch hands over when the cluster's catalog state moved.
type Change struct {
	// Enabled is the cluster's run-time choice for every provider that
	// has one.
	Enabled map[string]bool
	// Restart lists the providers another replica restarted since the
	// last change seen here.
	Restart []string
	// First is true for the first read, as Watch starts: choices to apply,
	// restarts only noted (a replica that just started has fresh upstreams).
	First bool
}

type restartRecord struct {
	ID string `json:"id"`
	By string `json:"by"`
}

func (c *Changes) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// sealed is Store, when it may hold choices and restarts.
func (c *Changes) sealed() (state.Store, error) {
	switch c.Store.(type) {
	case *state.Signed, *state.Memory:
		return c.Store, nil
	}
	return nil, ErrUnsealed
}

// SetEnabled records the cluster's choice for provider id and tells the
// other replicas.
func (c *Changes) SetEnabled(ctx context.Context, id string, on bool) error {
	st, err := c.sealed()
	if err != nil {
		return err
	}
	v := "0"
	if on {
		v = "1"
	}
	if err := st.Put(ctx, enabledPrefix+id, []byte(v), 0); err != nil {
		return err
	}
	return c.Bump(ctx)
}

// Restarted records that this replica restarts provider id, so that every
// other replica restarts its own upstream of it too.
func (c *Changes) Restarted(ctx context.Context, id string) error {
	st, err := c.sealed()
	if err != nil {
		return err
	}
	rec, _ := json.Marshal(restartRecord{ID: rand.Text(), By: c.Replica})
	if err := st.Put(ctx, restartPrefix+id, rec, 0); err != nil {
		return err
	}
	return c.Bump(ctx)
}

// Bump tells every replica that the catalog state changed (a pin approved:
// the pin store holds what changed; the replicas re-read it).
func (c *Changes) Bump(ctx context.Context) error {
	if _, err := c.Store.Incr(ctx, genKey, 0); err != nil {
		return err
	}
	if bus, ok := c.Store.(state.Bus); ok {
		_ = bus.Publish(ctx, changesTopic, "") // lost: the poll reads the counter
	}
	return nil
}

// Enabled reads the cluster's run-time choices now (a replica's first
// build applies them before anything starts).
func (c *Changes) Enabled(ctx context.Context) (map[string]bool, error) {
	st, err := c.sealed()
	if err != nil {
		return nil, err
	}
	en, err := st.Scan(ctx, enabledPrefix)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(en))
	for k, v := range en {
		out[strings.TrimPrefix(k, enabledPrefix)] = string(v) == "1"
	}
	return out, nil
}

// Watch reads the state now and hands it to apply (First), then, from a
// goroutine of its own until ctx ends, again each time it changes. apply
// runs on that goroutine, one change at a time.
func (c *Changes) Watch(ctx context.Context, apply func(Change)) {
	wake := make(chan struct{}, 1)
	if bus, ok := c.Store.(state.Bus); ok {
		bus.Listen(ctx, changesTopic, func(string) {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
	}
	c.step(ctx, apply)
	go func() {
		poll := orDefault(c.Poll, DefaultChangesPoll)
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-t.C:
			}
			c.step(ctx, apply)
		}
	}()
}

// step reads the counter and, when it moved (or nothing was read yet),
// the state. Until one read succeeded, every step is the First: a replica
// that starts while the store is away notes the restarts made before
// instead of redoing them.
func (c *Changes) step(ctx context.Context, apply func(Change)) {
	gen, err := c.Store.Count(ctx, genKey)
	if err != nil {
		c.log().Debug("cluster changes: reading the generation", "err", err)
		return
	}
	c.mu.Lock()
	first := !c.primed
	if !first && gen == c.gen {
		c.mu.Unlock()
		return
	}
	ch, ok := c.readLocked(ctx, first)
	if ok {
		c.gen, c.primed = gen, true
	}
	c.mu.Unlock()
	if ok {
		apply(ch)
	}
}

// readLocked reads the choices and restarts (c.mu held).
func (c *Changes) readLocked(ctx context.Context, first bool) (Change, bool) {
	ch := Change{First: first}
	var err error
	if ch.Enabled, err = c.Enabled(ctx); err != nil {
		c.log().Debug("cluster changes: reading the enabled set", "err", err)
		return ch, false
	}
	st, _ := c.sealed() // Enabled checked it
	rs, err := st.Scan(ctx, restartPrefix)
	if err != nil {
		c.log().Debug("cluster changes: reading the restarts", "err", err)
		return ch, false
	}
	if c.restarts == nil {
		c.restarts = map[string]string{}
	}
	for k, v := range rs {
		id := strings.TrimPrefix(k, restartPrefix)
		var r restartRecord
		if json.Unmarshal(v, &r) != nil || r.ID == "" || r.ID == c.restarts[id] {
			continue
		}
		c.restarts[id] = r.ID
		if !first && r.By != c.Replica {
			ch.Restart = append(ch.Restart, id)
		}
	}
	slices.Sort(ch.Restart)
	return ch, true
}
