package cli

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agent-tools/agent-tools/internal/tests/secretstest"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// TestScripts runs the command scripts in testdata/script with agent-tools
// run in-process (so they count for this package's coverage; the real
// binary is exercised by cmd/agent-tools' scripts). Besides testscript's
// own commands:
//
//	agent-tools ARGS...  runs the command; `!` expects a non-zero status.
//	                     Stdin is the file $CLI_STDIN when set, else empty;
//	                     $CLI_PROGRESS_MS shows progress every that many ms;
//	                     $CLI_START_WAIT_MS bounds the wait for starting providers.
//	status N             checks the last agent-tools exit status.
//
// $UPSTREAM is an upstream MCP server (upstream_test.go).
func TestScripts(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// $UPSTREAM is this test binary, an upstream MCP server run as
		// `$UPSTREAM agent-tools-test-upstream MODE` (upstream_test.go).
		Setup: func(e *testscript.Env) error { e.Setenv("UPSTREAM", self); return nil },
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"agent-tools": runScripted,
			"status":      checkStatus,
		},
	})
}

func runScripted(ts *testscript.TestScript, neg bool, args []string) {
	stdin := strings.NewReader("")
	if f := ts.Getenv("CLI_STDIN"); f != "" {
		stdin = strings.NewReader(ts.ReadFile(f))
	}
	env := &Env{
		Stdin: stdin, Stdout: ts.Stdout(), Stderr: ts.Stderr(), Dir: ts.MkAbs("."),
		LookupEnv: func(k string) (string, bool) {
			v := ts.Getenv(k)
			return v, v != ""
		},
	}
	if ms := ts.Getenv("CLI_PROGRESS_MS"); ms != "" { // as if stderr were a terminal
		n, err := strconv.Atoi(ms)
		ts.Check(err)
		env.Progress, env.ProgressEvery = true, time.Duration(n)*time.Millisecond
	}
	if ms := ts.Getenv("CLI_START_WAIT_MS"); ms != "" {
		n, err := strconv.Atoi(ms)
		ts.Check(err)
		env.StartWait = time.Duration(n) * time.Millisecond
	}
	code := Run(context.Background(), env, args)
	ts.Setenv("CLI_STATUS", strconv.Itoa(code))
	if (code != 0) != neg {
		ts.Fatalf("agent-tools %s: exit status %d", strings.Join(args, " "), code)
	}
}

func checkStatus(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: status N")
	}
	if got := ts.Getenv("CLI_STATUS"); (got == args[0]) == neg {
		ts.Fatalf("exit status %s, want %s%s", got, map[bool]string{true: "not "}[neg], args[0])
	}
}

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == upstreamArg { // upstream_test.go
		os.Exit(runUpstream(os.Args[2:]))
	}
	code := testutil.RunIsolated(m)
	secretstest.Stop() // the keyring TestSecretsScripts started, if any
	// The registry server of registry_test.go, if started.
	for _, f := range cleanups {
		f()
	}
	os.Exit(code)
}

// TestSecretsScripts runs the scripts of `agent-tools secrets` against a
// real Secret Service (gnome-keyring on a private D-Bus; skipped without).
func TestSecretsScripts(t *testing.T) {
	secretstest.Keyring(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/secrets",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"agent-tools": runScripted,
			"status":      checkStatus,
		},
	})
}

func TestUserDirsIsolated(t *testing.T) { testutil.CheckIsolated(t) }
