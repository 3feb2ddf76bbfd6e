//go:build race

package faults

// raceEnabled: the race detector multiplies a script process's time and
// memory, so the hostile scripts' bounds do not apply.
const raceEnabled = true
