package policy

// Approval is a person's answer to a confirmation request. Beyond yes or
// no, a person may decide once for every later call of the same tool: for
// this session, or always (remembered by canonical name, docs/pins.md).
type Approval int

const (
	// Declined: the person said no.
	Declined Approval = iota
	// ApprovedOnce allows this one call.
	ApprovedOnce
	// ApprovedForSession allows this tool for the rest of the session.
	ApprovedForSession
	// ApprovedAlways allows this tool from now on, in every session.
	ApprovedAlways
)

// Approved reports whether the call may run.
func (a Approval) Approved() bool { return a > Declined }
