package provider

import (
	"context"
	"errors"
	"time"
)

// Optional capabilities of providers with a life of their own (an upstream
// process or session), for the operator: where the provider is in that
// life, and a restart on request. Reach them through wrappers with As.

// ErrStarting marks an error from Tools that only means the provider has not
// finished its first start yet (a slow upstream): the runtime reports it as
// "starting", not as a failure. Match it with errors.Is.
var ErrStarting = errors.New("provider is still starting")

// Restarter is implemented by providers that can be restarted on an
// operator's request: the current process or session is ended (calls in
// flight on it fail with PROVIDER_UNAVAILABLE) and a fresh one is started.
// Restart returns once the new start ended (its error when it failed), or
// when ctx ends (the start then goes on in the background).
type Restarter interface {
	Restart(ctx context.Context) error
}

// RestartCounter is implemented by providers that count their restarts:
// the operator's and the automatic ones (after a crash or a hung upstream).
type RestartCounter interface {
	Restarts() int
}

// Lifecycle is implemented by providers that know where they are in their
// life, beyond what their tool listing says.
type Lifecycle interface {
	Lifecycle() LifecycleState
}

// LifecycleState is a provider's own account of its life.
type LifecycleState struct {
	// Starting: a start (or restart) is in flight.
	Starting bool
	// Failed: the last start failed or the session died, and none runs now
	// (it may be restarted automatically).
	Failed bool
	// NeedsLogin: failed because the upstream waits for a person's login
	// (agent-tools auth login); not broken.
	NeedsLogin bool
	// LastError is the most recent failure, kept after a recovery; already
	// scrubbed of secrets by the provider. LastErrorAt is when it happened.
	LastError   string
	LastErrorAt time.Time
}
