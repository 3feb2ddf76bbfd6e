package workers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// check is one verification command's outcome (docs/workers.md, "Verification").
type check struct {
	Command    string `json:"command"`
	OK         bool   `json:"ok"`
	ExitCode   int    `json:"exit_code"`
	TimedOut   bool   `json:"timed_out"`
	DurationMS int64  `json:"duration_ms"`
	OutputTail string `json:"output_tail"`
}

// outputTail is how much of a check's output the result keeps.
const outputTail = 1500

// checkTimeout bounds one verification command.
const checkTimeout = 10 * time.Minute

// projectChecks are the project's own checks: package.json typecheck/test
// scripts, go vet + go test for a Go module, a Makefile test target. Never
// build, dev or start.
func projectChecks(dir string) [][]string {
	var out [][]string
	if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal(b, &pkg) == nil {
			for _, s := range []string{"typecheck", "test"} {
				if _, ok := pkg.Scripts[s]; ok {
					out = append(out, []string{"npm", "run", s})
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		out = append(out, []string{"go", "vet", "./..."}, []string{"go", "test", "./..."})
	}
	if b, err := os.ReadFile(filepath.Join(dir, "Makefile")); err == nil && makeTest.Match(b) {
		out = append(out, []string{"make", "test"})
	}
	return out
}

var makeTest = regexp.MustCompile(`(?m)^test\s*:`)

// verify runs each command in dir, without a shell, after the worker exited.
func verify(ctx context.Context, dir string, env []string, cmds [][]string) []check {
	out := make([]check, 0, len(cmds))
	for _, argv := range cmds {
		c := check{Command: shellJoin(argv), ExitCode: -1}
		res, err := proc.Run(ctx, proc.Spec{Path: argv[0], Args: argv[1:], Dir: dir, Env: env, Timeout: checkTimeout, Grace: 3 * time.Second})
		if err != nil {
			c.OutputTail = errText(err)
			out = append(out, c)
			continue
		}
		c.ExitCode, c.TimedOut, c.DurationMS = res.ExitCode, res.TimedOut, res.Duration.Milliseconds()
		c.OK = res.ExitCode == 0 && !res.TimedOut && !res.Cancelled
		c.OutputTail = proc.Tail(proc.ResultText(res), outputTail)
		out = append(out, c)
	}
	return out
}

func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
