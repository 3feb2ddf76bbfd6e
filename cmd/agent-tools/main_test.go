package main

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agent-tools/agent-tools/internal/cli"
)

// TestMain lets testscript run the real command in-process as "agent-tools".
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agent-tools": func() {
			os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}
