//go:build race

package cli

// raceEnabled: the race detector slows three replicas in one process
// several times over; timing bounds allow for it (raceSlack).
const raceEnabled = true
