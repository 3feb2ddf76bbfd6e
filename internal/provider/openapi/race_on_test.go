//go:build race

package openapi

// raceOn: the heavy interop tests (GitHub's 13 MB document, a PocketBase
// build) skip under the race detector; scripts/test.sh runs them once
// without it.
const raceOn = true
