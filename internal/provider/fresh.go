package provider

import "context"

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
