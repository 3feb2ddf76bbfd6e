package agenttools

import "time"

// SetClock sets the clock r's providers measure Options.RelistInterval
// with (tests move it instead of sleeping); call it before AddProvider.
func SetClock(r *Runtime, now func() time.Time) { r.now = now }
