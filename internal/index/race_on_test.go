//go:build race

package index

// raceEnabled: the race detector is on. Single-goroutine differential tests
// gain nothing from it and run ~10× slower; scripts/test.sh runs them once
// without it.
const raceEnabled = true
