package cluster

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/state"
)

// Approvals is the board of calls waiting for a person (policy.confirm:
// human). Each waiting call has an entry in the store — memory in one
// process, Redis with server.redis — so that the console of any replica
// lists and decides it, while the call itself waits on the replica that
// holds it (its client's connection is there) and resumes there.
//
// Keys, under the store's own prefix:
//
//	approval:<id>         the entry (JSON), a lease of Lease that the waiting
//	                      call renews: a crashed replica's entries are gone
//	                      within one lease
//	approval-answer:<id>  the decision, claimed exactly once
//	                      (state.Store.Claim): by a console's answer, or by
//	                      the waiting call itself ("withdrawn") when its
//	                      deadline passes or its client goes away; it
//	                      expires after Keep
//
// The waiting call reads its answer key when woken — at once when the
// decision is made on its own replica, by the bus (Redis pub/sub) from
// another — and on a poll every Poll whatever happens, so a lost message
// costs at most one poll interval.
//
// Both are sealed with the cluster key (Store is a state.Signed, bound to
// the key name): an entry or an answer that does not verify — a plain SET
// by anyone who can write to Redis, or a sealed value moved from another
// key — is refused and treated as absent, so writing to Redis neither
// approves a call nor lists one, or rewrites one's tool or arguments, on
// any console. (Writing an answer first still withholds the call: it
// times out. A Redis writer can always deny service.)
//
// Nothing is keyed on the caller's identity: an id is random (130 bits).
// The identity an entry shows is the holding replica's view of the caller
// (an unauthenticated caller is process:<pid> of that replica), and a
// "for this session" or "always" answer is remembered there, for the
// identity (and session) that replica knows — never for the operator who
// decided.
type Approvals struct {
	// Store holds the entries and decisions; over a state.Bus it also
	// wakes waiting calls on other replicas (see Listen). It must be a
	// *state.Signed (cluster.Key.Signed), or a *state.Memory of this
	// process alone: the board refuses any other store (ErrUnsealed), so
	// that a shared one is never read unsealed.
	Store state.Store
	// Replica names this process in the entries it posts.
	Replica string
	// Poll bounds how long a decision made elsewhere can go unnoticed
	// (0 = DefaultApprovalPoll).
	Poll time.Duration
	// Lease is how long an entry outlives its waiting call's last renewal
	// (0 = DefaultApprovalLease); renewed every third of it.
	Lease time.Duration
	// Keep is how long a decision record lives (0 = DefaultApprovalKeep).
	Keep time.Duration
	// TickEvery is how often Wait calls its tick (0 = 5 s).
	TickEvery time.Duration

	mu      sync.Mutex
	waiters map[string]chan struct{} // calls waiting in this process, by id
}

// Defaults of an Approvals board.
const (
	DefaultApprovalPoll  = 250 * time.Millisecond
	DefaultApprovalLease = 15 * time.Second
	DefaultApprovalKeep  = time.Minute
)

// approvalTopic is the bus topic a decision's id is published on.
const approvalTopic = "approvals"

// Approval is one waiting call as every console lists it.
type Approval struct {
	ID       string    `json:"id"`
	Tool     string    `json:"tool"`
	Provider string    `json:"provider"`
	Session  string    `json:"session,omitempty"` // its first 8 characters: an id is half a credential
	Client   string    `json:"client,omitempty"`
	Identity string    `json:"identity,omitempty"` // as the holding replica knows the caller
	Replica  string    `json:"replica,omitempty"`  // the replica holding the call
	Args     string    `json:"args"`               // scrubbed of the secrets the runtime knows, clipped
	Since    time.Time `json:"since"`
	Expires  time.Time `json:"expires"`
}

// ErrUnsealed is the board's error over a store that is neither sealed
// (state.Signed) nor this process's memory.
var ErrUnsealed = errors.New("approvals: the shared store is not sealed with the cluster key")

// store is Store, when it may hold approvals.
func (b *Approvals) store() (state.Store, error) {
	switch b.Store.(type) {
	case *state.Signed, *state.Memory:
		return b.Store, nil
	}
	return nil, ErrUnsealed
}

// ErrApprovalTimeout is Wait's error when nobody decided before the
// entry's Expires.
var ErrApprovalTimeout = errors.New("nobody approved the call in time")

// The decisions as stored.
var answers = map[policy.Approval]string{
	policy.Declined:           "declined",
	policy.ApprovedOnce:       "once",
	policy.ApprovedForSession: "session",
	policy.ApprovedAlways:     "always",
}

const withdrawn = "withdrawn"

func parseAnswer(b []byte) (policy.Approval, bool) {
	for a, s := range answers {
		if string(b) == s {
			return a, true
		}
	}
	return policy.Declined, false
}

func entryKey(id string) string  { return "approval:" + id }
func answerKey(id string) string { return "approval-answer:" + id }

// validID accepts what NewApprovalID makes (and the short ids of older
// versions): up to 64 letters and digits. Anything else is no entry.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// NewApprovalID returns a fresh random entry id.
func NewApprovalID() string { return rand.Text() }

func (b *Approvals) poll() time.Duration  { return orDefault(b.Poll, DefaultApprovalPoll) }
func (b *Approvals) lease() time.Duration { return orDefault(b.Lease, DefaultApprovalLease) }
func (b *Approvals) keep() time.Duration  { return orDefault(b.Keep, DefaultApprovalKeep) }
func (b *Approvals) tick() time.Duration  { return orDefault(b.TickEvery, 5*time.Second) }

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Listen subscribes to the decisions made on other replicas until ctx
// ends (a no-op when the store is no state.Bus): a call waiting here
// wakes as soon as its decision is published instead of at its next poll.
func (b *Approvals) Listen(ctx context.Context) {
	if bus, ok := b.Store.(state.Bus); ok {
		if _, err := b.store(); err == nil {
			bus.Listen(ctx, approvalTopic, b.wake)
		}
	}
}

// wake tells the call waiting here for id, if any, to read its answer.
func (b *Approvals) wake(id string) {
	b.mu.Lock()
	ch := b.waiters[id]
	b.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Wait posts a (its ID made when empty, Replica set) and waits until a
// person decides it, a.Expires passes (ErrApprovalTimeout) or ctx ends;
// tick, when set, runs every TickEvery meanwhile (progress for the
// client). The entry is withdrawn however it ends, so a late answer finds
// nothing to decide.
func (b *Approvals) Wait(ctx context.Context, a Approval, tick func()) (policy.Approval, error) {
	st, err := b.store()
	if err != nil {
		return policy.Declined, err
	}
	if a.ID == "" {
		a.ID = NewApprovalID()
	}
	a.Replica = b.Replica
	wake := make(chan struct{}, 1)
	b.mu.Lock()
	if b.waiters == nil {
		b.waiters = map[string]chan struct{}{}
	}
	b.waiters[a.ID] = wake
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiters, a.ID)
		b.mu.Unlock()
	}()
	entry, err := json.Marshal(a)
	if err != nil {
		return policy.Declined, err
	}
	if err := st.Put(ctx, entryKey(a.ID), entry, b.lease()); err != nil {
		return policy.Declined, fmt.Errorf("posting the approval: %w", err)
	}
	defer func() { // gone from every console, however the wait ends
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*state.OpTimeout)
		_ = st.Delete(dctx, entryKey(a.ID))
		cancel()
	}()
	answer := func() (policy.Approval, bool) {
		v, err := st.Get(ctx, answerKey(a.ID))
		if err != nil {
			return policy.Declined, false // none yet, or the store hiccupped: the next poll reads again
		}
		return parseAnswer(v)
	}
	deadline := time.NewTimer(time.Until(a.Expires))
	defer deadline.Stop()
	poll := time.NewTicker(b.poll())
	defer poll.Stop()
	renew := time.NewTicker(b.lease() / 3)
	defer renew.Stop()
	ticks := time.NewTicker(b.tick())
	defer ticks.Stop()
	for {
		select {
		case <-wake:
			if v, ok := answer(); ok {
				return v, nil
			}
		case <-poll.C:
			if v, ok := answer(); ok {
				return v, nil
			}
		case <-renew.C:
			if v, ok := answer(); ok { // decided: renewing would list it again
				return v, nil
			}
			_ = st.Put(ctx, entryKey(a.ID), entry, b.lease())
		case <-ticks.C:
			if tick != nil {
				tick()
			}
		case <-deadline.C:
			return b.withdraw(ctx, st, a.ID, fmt.Errorf("%w (%s)", ErrApprovalTimeout, a.Expires.Sub(a.Since).Round(time.Millisecond)))
		case <-ctx.Done():
			_, _ = b.withdraw(context.WithoutCancel(ctx), st, a.ID, ctx.Err())
			return policy.Declined, ctx.Err() // decided or not, the call cannot run now
		}
	}
}

// withdraw claims the decision for the waiting call itself, so no console
// can answer it any more. When a console's answer won the race, that
// answer stands (the person was told it was taken).
func (b *Approvals) withdraw(ctx context.Context, st state.Store, id string, why error) (policy.Approval, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*state.OpTimeout)
	defer cancel()
	won, err := st.Claim(cctx, answerKey(id), []byte(withdrawn), b.keep())
	if err != nil || won {
		return policy.Declined, why
	}
	if v, err := st.Get(cctx, answerKey(id)); err == nil {
		if a, ok := parseAnswer(v); ok {
			return a, nil
		}
	}
	return policy.Declined, why
}

// Get returns a waiting call by id, from whichever replica holds it.
func (b *Approvals) Get(ctx context.Context, id string) (Approval, bool, error) {
	if !validID(id) {
		return Approval{}, false, nil
	}
	st, err := b.store()
	if err != nil {
		return Approval{}, false, err
	}
	v, err := st.Get(ctx, entryKey(id))
	if errors.Is(err, state.ErrNotFound) {
		return Approval{}, false, nil
	}
	if err != nil {
		return Approval{}, false, err
	}
	var a Approval
	if err := json.Unmarshal(v, &a); err != nil || a.ID != id {
		return Approval{}, false, nil
	}
	return a, true, nil
}

// List returns every waiting call of the cluster, oldest first.
func (b *Approvals) List(ctx context.Context) ([]Approval, error) {
	st, err := b.store()
	if err != nil {
		return nil, err
	}
	m, err := st.Scan(ctx, "approval:")
	if err != nil {
		return nil, err
	}
	out := make([]Approval, 0, len(m))
	for _, v := range m {
		var a Approval
		if json.Unmarshal(v, &a) == nil && a.ID != "" {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(x, y Approval) int {
		if c := x.Since.Compare(y.Since); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out, nil
}

// Decide answers a waiting call once, from any replica: false when there
// is none by that id (never posted, already answered, withdrawn or
// expired). The waiting call is woken: directly when it waits in this
// process, else through the bus (and its poll).
func (b *Approvals) Decide(ctx context.Context, id string, answer policy.Approval) (bool, error) {
	stored, known := answers[answer]
	if !known {
		return false, fmt.Errorf("unknown answer %d", answer)
	}
	if _, ok, err := b.Get(ctx, id); !ok || err != nil {
		return false, err
	}
	st, _ := b.store() // Get checked it
	won, err := st.Claim(ctx, answerKey(id), []byte(stored), b.keep())
	if err != nil || !won {
		return false, err
	}
	_ = st.Delete(ctx, entryKey(id)) // off every list at once; the waiting call deletes it too
	b.mu.Lock()
	_, here := b.waiters[id]
	b.mu.Unlock()
	if here {
		b.wake(id)
	} else if bus, ok := st.(state.Bus); ok {
		_ = bus.Publish(ctx, approvalTopic, id) // lost: the waiting call's poll reads it
	}
	return true, nil
}
