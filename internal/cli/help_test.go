package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpEveryCommand asks every command (and every member of a family)
// for help both ways: status 0, the usage once on stdout, nothing on
// stderr, and nothing started or written.
func TestHelpEveryCommand(t *testing.T) {
	members := map[string][]string{
		"auth": {"login", "status", "logout"}, "pins": {"list", "approve"},
		"decisions": {"list", "revoke", "clear"}, "config": {"validate"},
	}
	for _, c := range commands() {
		calls := [][]string{{c.name}}
		for _, m := range members[c.name] {
			calls = append(calls, []string{c.name, m})
		}
		for _, call := range calls {
			for _, h := range []string{"-h", "--help"} {
				args := append(append([]string{}, call...), h)
				t.Run(strings.Join(args, " "), func(t *testing.T) {
					dir := t.TempDir()
					var out, errb bytes.Buffer
					env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir,
						LookupEnv: func(string) (string, bool) { return "", false }}
					if code := Run(context.Background(), env, args); code != ExitOK {
						t.Fatalf("status %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
					}
					if n := strings.Count(out.String(), "Usage: agent-tools "+call[0]); n != 1 {
						t.Errorf("usage printed %d times, want once:\n%s", n, out.String())
					}
					if errb.Len() > 0 {
						t.Errorf("stderr: %s", errb.String())
					}
				})
			}
		}
	}
}
