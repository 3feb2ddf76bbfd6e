// Command prepare downloads and builds the official MCP registry server the
// registry tests run (internal/tests/regserver), so that the tests build it
// offline. .ci/run runs it.
package main

import (
	"fmt"
	"os"

	"github.com/agent-tools/agent-tools/internal/tests/regserver"
)

func main() {
	bin, note, err := regserver.Build(true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "prepare:", err)
		os.Exit(1)
	}
	if note != "" {
		fmt.Println(note)
	}
	fmt.Println("built", regserver.Module+"@"+regserver.Version, "as", bin)
}
