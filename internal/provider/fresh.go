package provider

import (
	"context"
	"sync/atomic"
	"time"
)

// Fresher is implemented by providers that know, without listing, that
// Tools (and Skills) would return what they returned last time: a provider
// whose list only changes through its own signal (a file watcher, an
// upstream's list_changed) rather than on every read. When every provider
// of a catalog is fresh, a tools/call needs no re-listing at all: no
// directory scan, no global lock on the call path.
type Fresher interface {
	// Fresh reports that nothing changed since the last successful Tools call.
	// It must be cheap (no I/O) and safe for concurrent use.
	Fresh() bool
}

type rescanKey struct{}

// WithRescan marks ctx so that a refresh re-lists every provider even when
// it says it is fresh: the facade asks for it once before answering
// UNKNOWN_TOOL, so a script saved a moment ago is callable at once.
func WithRescan(ctx context.Context) context.Context {
	return context.WithValue(ctx, rescanKey{}, true)
}

// Rescan reports whether ctx asks for a full re-listing (see WithRescan).
func Rescan(ctx context.Context) bool {
	v, _ := ctx.Value(rescanKey{}).(bool)
	return v
}

// Freshness is the bookkeeping behind a Fresher whose list changes only
// through a signal it hears (Changed: a callback, a watcher, an Add), or
// that hears none and trusts a listing for a while. A provider brackets
// each listing with Begin and Done (Done only when it succeeded) and calls
// Changed on every signal; Fresh then answers from a generation counter and
// a timestamp, with no lock and no I/O. A change heard while a listing is
// running makes the listing stale, so no signal is lost.
//
// The zero value is ready (clock: time.Now) and stale until a first Done.
type Freshness struct {
	// Now is the clock (nil: time.Now); set it before use. Tests move it.
	Now func() time.Time

	gen    atomic.Uint64 // counts Changed
	listed atomic.Uint64 // 1 + the gen a successful listing began at; 0: never
	at     atomic.Int64  // unix nanoseconds when that listing began
}

// Listing is a listing in progress: what Begin saw, for Done.
type Listing struct {
	gen uint64
	at  int64
}

func (f *Freshness) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// Begin is called before a listing.
func (f *Freshness) Begin() Listing {
	return Listing{gen: f.gen.Load(), at: f.now().UnixNano()}
}

// Done records that the listing l began succeeded: the provider is fresh
// from now on unless a change was heard since l began.
func (f *Freshness) Done(l Listing) {
	f.at.Store(l.at) // before listed: a reader that sees the new listed sees this time
	f.listed.Store(l.gen + 1)
}

// Changed records that the list may have changed: the provider is stale
// until a listing that begins after this call succeeds.
func (f *Freshness) Changed() { f.gen.Add(1) }

// Fresh reports that a listing succeeded, no change was heard since it
// began, and, when maxAge > 0, it began less than maxAge ago (for a
// provider that hears of no change: it is re-listed at most once per
// maxAge). A negative maxAge is never fresh.
func (f *Freshness) Fresh(maxAge time.Duration) bool {
	if maxAge < 0 {
		return false
	}
	listed := f.listed.Load()
	if listed == 0 || listed-1 != f.gen.Load() {
		return false
	}
	return maxAge == 0 || f.now().Sub(time.Unix(0, f.at.Load())) < maxAge
}
