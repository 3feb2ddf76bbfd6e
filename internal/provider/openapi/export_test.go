package openapi

import "time"

// RaceOn tells the external tests (package openapi_test) whether the race
// detector is on.
const RaceOn = raceOn

// SetExpirySkew changes how long before a token's exp it is renewed, for
// a test; the returned function restores it.
func SetExpirySkew(d time.Duration) (restore func()) {
	old := expirySkew.Load()
	expirySkew.Store(int64(d))
	return func() { expirySkew.Store(old) }
}
