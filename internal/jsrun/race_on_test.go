//go:build race

package jsrun

// raceEnabled: the race detector's runtime multiplies a child's memory and
// time, so the timing bounds of the hostile suite do not apply.
const raceEnabled = true
