//go:build race

package builtin

// raceEnabled: the race detector multiplies a script process's time and
// memory, so the hostile test's bounds do not apply.
const raceEnabled = true
