package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agent-tools/agent-tools/internal/cli"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// TestMain lets testscript run the real command in-process as "agent-tools",
// with the user's cache directory pointed at a temporary one.
func TestMain(m *testing.M) {
	cmds := map[string]func(){
		"agent-tools": func() {
			os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	}
	if filepath.Base(os.Args[0]) == "agent-tools" { // a script's command: its environment is the script's
		testscript.Main(m, cmds)
	}
	cleanup, err := testutil.IsolateUserDirs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testscript.Main(cleanupM{m, cleanup}, cmds) // it exits: the cleanup runs inside Run
}

// cleanupM runs the tests, then cleanup.
type cleanupM struct {
	m       *testing.M
	cleanup func()
}

func (c cleanupM) Run() int {
	defer c.cleanup()
	return c.m.Run()
}

// TestScripts runs the end-to-end CLI scripts in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}
