package workers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	shellquote "github.com/kballard/go-shellquote"
)

// request is the input of <id>_run (docs/workers.md).
type request struct {
	Goal               string   `json:"goal"`
	Mode               string   `json:"mode"`
	Model              string   `json:"model,omitempty"`
	Effort             string   `json:"effort,omitempty"`
	RelevantFiles      []string `json:"relevant_files,omitempty"`
	AllowedPaths       []string `json:"allowed_paths,omitempty"`
	NoTouch            []string `json:"no_touch,omitempty"`
	Contract           string   `json:"contract,omitempty"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	Tests              []string `json:"tests,omitempty"`
	VerifyCommands     []string `json:"verify_commands,omitempty"`
	SkipVerification   bool     `json:"skip_verification,omitempty"`
	Timeout            string   `json:"timeout,omitempty"`
	// Apply asks, with isolation: worktree, to apply the diff to the user's
	// tree when it stays inside scope.
	Apply bool `json:"apply,omitempty"`
}

const runSchema = `{
  "type": "object",
  "properties": {
    "goal": {"type": "string", "minLength": 1, "description": "What the worker must achieve, in one or two sentences."},
    "mode": {"type": "string", "enum": ["analyze", "review", "implement"], "description": "analyze and review are read-only; implement writes inside allowed_paths and needs confirmation."},
    "model": {"type": "string", "description": "A model the worker CLI offers (see <id>_status); never substituted."},
    "effort": {"type": "string", "description": "Reasoning effort as the worker CLI names it (see <id>_status)."},
    "relevant_files": {"type": "array", "items": {"type": "string"}, "description": "Files to read first, relative to the project root."},
    "allowed_paths": {"type": "array", "items": {"type": "string"}, "description": "Required for implement: the only files or directories the worker may change."},
    "no_touch": {"type": "array", "items": {"type": "string"}, "description": "Paths the worker must not change, even inside allowed_paths."},
    "contract": {"type": "string", "description": "Interfaces or signatures that must hold."},
    "acceptance_criteria": {"type": "array", "items": {"type": "string"}},
    "tests": {"type": "array", "items": {"type": "string"}, "description": "Tests the worker should run or write (context for the worker; never run by the runtime)."},
    "verify_commands": {"type": "array", "items": {"type": "string"}, "description": "Commands the runtime runs after an implement job, without a shell (no | && ; > or backticks). Default: the provider's configured verify list, else the project's own checks. Commands not in the configured list need a person's approval, whatever the confirm mode."},
    "skip_verification": {"type": "boolean"},
    "timeout": {"type": "string", "description": "Deadline for the worker, e.g. \"10m\" (at most the provider's timeout)."},
    "apply": {"type": "boolean", "description": "With isolation: worktree, apply the worker's diff to the project when it stays inside scope."}
  },
  "required": ["goal", "mode"],
  "additionalProperties": false
}`

func parseRequest(args json.RawMessage) (*request, error) {
	var r request
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	if strings.TrimSpace(r.Goal) == "" {
		return nil, fmt.Errorf("goal is empty")
	}
	if !slices.Contains([]string{"analyze", "review", "implement"}, r.Mode) {
		return nil, fmt.Errorf("mode %q: want analyze, review or implement", r.Mode)
	}
	return &r, nil
}

func (r *request) timeout() (time.Duration, error) {
	if r.Timeout == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(r.Timeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("timeout %q: want a positive duration such as \"10m\"", r.Timeout)
	}
	return d, nil
}

// shellMeta are the shell operators a verification command may not contain:
// commands run without a shell, so they could only mislead.
var shellMeta = []string{"|", "&&", ";", ">", "<", "`", "$(", "&"}

// splitCommand turns one verification command into an argv without a shell.
func splitCommand(cmd string) ([]string, error) {
	for _, m := range shellMeta {
		if strings.Contains(cmd, m) {
			return nil, fmt.Errorf("verify command %q contains %q: commands run without a shell; give one command per entry", cmd, m)
		}
	}
	argv, err := shellquote.Split(cmd)
	if err != nil {
		return nil, fmt.Errorf("verify command %q: %w", cmd, err)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("verify command is empty")
	}
	return argv, nil
}
