package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/agent-tools/agent-tools/internal/jsrun"
)

// scriptChild serves the hidden command of a script's child process
// (`agent-tools __jsrun`, started by the server for each execute_javascript
// script and skill run; docs/modes.md, "Code mode"): ok is false for any
// other command line. Anything else reaching Main makes this process able
// to start such children.
func scriptChild(args []string, stdin io.Reader, stdout io.Writer) (code int, ok bool) {
	if len(args) == 0 || args[0] != jsrun.ChildArg {
		jsrun.EnableChild()
		return 0, false
	}
	return jsrun.ChildMain(stdin, stdout), true
}

// scriptIsolation is doctor's line on how scripts are contained.
func scriptIsolation() string {
	_, how := jsrun.Isolation()
	return how
}

// scriptLimitLines is doctor's text on scripts: how they are contained,
// then each limit on a line of its own, saying so where it cannot be set.
func scriptLimitLines() string {
	ok, how := jsrun.Isolation()
	if ok {
		how = "each script runs in its own process"
	}
	var b strings.Builder
	b.WriteString(how)
	for _, l := range jsrun.ProcessLimits() {
		fmt.Fprintf(&b, "\n  %s: %s", l.Setting, l.How)
	}
	return b.String()
}
