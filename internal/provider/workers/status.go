package workers

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// statusReport is <id>_status: no inference, never credentials or environment.
type statusReport struct {
	Provider    string        `json:"provider"`
	Worker      string        `json:"worker"`
	ProjectDir  string        `json:"project_dir"`
	Installed   bool          `json:"installed"`
	Path        string        `json:"path,omitempty"`
	Version     string        `json:"version,omitempty"`
	Auth        string        `json:"auth"` // ok | required | unverified
	AuthSource  string        `json:"auth_source"`
	Flags       string        `json:"flags"` // verified | unverified
	FlagsDetail string        `json:"flags_detail"`
	ReadOnly    string        `json:"read_only"`
	Efforts     []string      `json:"efforts"`
	ModelStatus []modelStatus `json:"model_status"`
	ModelSource string        `json:"model_source"`
	Isolation   string        `json:"isolation"`
	// Containment is how a job's processes are killed at its end (cgroup
	// v2, or a process group plus a sweep by environment marker).
	Containment string              `json:"containment"`
	Git         gitStatus           `json:"git_verification"`
	ActiveJobs  []activeJob         `json:"active_jobs"`
	Scopes      map[string][]string `json:"write_scopes"`
	Warnings    []string            `json:"warnings"`
}

type modelStatus struct {
	Model   string   `json:"model"`
	Status  string   `json:"status"` // available | unavailable | unverified
	Efforts []string `json:"efforts,omitempty"`
}

type gitStatus struct {
	Available bool   `json:"available"`
	Detail    string `json:"detail"`
}

// probeTimeout bounds each --version or login probe.
const probeTimeout = 20 * time.Second

func (p *Provider) status(ctx context.Context) *statusReport {
	w := p.worker
	st := &statusReport{Provider: p.ID, Worker: w.Name, ProjectDir: p.root, Auth: "unverified",
		ReadOnly: w.ReadOnly, Efforts: w.Efforts, ModelStatus: []modelStatus{}, Isolation: or(p.isolation, "none"),
		Containment: proc.Containment(),
		ActiveJobs:  []activeJob{}, Scopes: p.locks.snapshot(), Warnings: []string{}}
	p.mu.Lock() // jobs first: the probes below take time
	for _, a := range p.active {
		st.ActiveJobs = append(st.ActiveJobs, *a)
	}
	p.mu.Unlock()
	if st.Efforts == nil {
		st.Efforts = []string{}
	}
	env := p.env()
	bin, err := p.executable()
	st.Flags, st.FlagsDetail = "unverified", "the executable was not found"
	if err != nil {
		st.Warnings = append(st.Warnings, "executable not found: "+p.command)
		st.AuthSource = "not installed"
	} else {
		st.Installed, st.Path = true, bin
		st.Flags, st.FlagsDetail = p.checkFlags(ctx, bin, env)
		if st.Flags != "verified" && w.Name != "custom" {
			st.Warnings = append(st.Warnings, "flags unverified: "+st.FlagsDetail)
		}
		if len(w.VersionArgs) > 0 {
			if out, code, ok := p.probe(ctx, bin, w.VersionArgs, env); ok && code == 0 {
				st.Version = versionLine(out)
			} else {
				st.Warnings = append(st.Warnings, "version probe failed")
			}
		}
		st.AuthSource = "no cheap login probe for " + w.Name + ": unverified"
		if len(w.AuthArgs) > 0 {
			st.AuthSource = "`" + w.Name + " " + strings.Join(w.AuthArgs, " ") + "` exit status"
			if out, code, ok := p.probe(ctx, bin, w.AuthArgs, env); ok {
				switch {
				case code == 0 && !authRE.MatchString(out):
					st.Auth = "ok"
				case code != 0:
					st.Auth = "required"
				}
			}
		}
	}
	cat := p.catalogue(ctx)
	switch {
	case cat == nil:
		st.ModelSource = w.Catalogue
	case cat.readable():
		st.ModelSource = cat.Source
	default:
		st.ModelSource = cat.Source + ": " + cat.Err
		st.Warnings = append(st.Warnings, "model availability unverified: "+cat.Err)
	}
	models := slices.Clone(p.models)
	if len(models) == 0 && cat.readable() {
		models = cat.names()
	}
	for _, m := range models {
		ms := modelStatus{Model: m, Status: "unverified"}
		if cat.readable() {
			if e, ok := cat.Models[m]; ok {
				ms.Status, ms.Efforts = "available", e
			} else {
				ms.Status = "unavailable"
			}
		}
		st.ModelStatus = append(st.ModelStatus, ms)
	}
	if _, err := newGit(env).run(ctx, p.root, "rev-parse", "--show-toplevel"); err == nil {
		st.Git = gitStatus{Available: true, Detail: "files_changed and scope_violations are computed from git"}
	} else {
		st.Git = gitStatus{Detail: "not a git work tree: an empty scope_violations would be silence, not a certificate of health"}
		st.Warnings = append(st.Warnings, st.Git.Detail)
	}
	slices.SortFunc(st.ActiveJobs, func(a, b activeJob) int { return strings.Compare(a.ID, b.ID) })
	return st
}

// probe runs a cheap, inference-free command of the CLI with a deadline and
// auto-update/telemetry switched off.
func (p *Provider) probe(ctx context.Context, bin string, args []string, env []string) (string, int, bool) {
	res, err := proc.Run(ctx, proc.Spec{Path: bin, Args: args, Env: append(env, quietEnv...), Dir: os.TempDir(),
		Timeout: probeTimeout, Grace: time.Second, MaxOutput: 1 << 20})
	if err != nil || res.TimedOut || res.Cancelled {
		return "", -1, false
	}
	return proc.Text(res.Stdout) + proc.Text(res.Stderr), res.ExitCode, true
}

// quietEnv switches off auto-update and telemetry of the known CLIs for probes.
var quietEnv = []string{
	"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
	"GEMINI_TELEMETRY_ENABLED=false", "NO_UPDATE_NOTIFIER=1", "CODEX_DISABLE_UPDATE_CHECK=1",
}

// versionLine picks the line with a version number (CLIs print warnings too).
func versionLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if versionRE.MatchString(l) && !strings.HasPrefix(l, "WARNING") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+`)

// checkFlags says whether the flags the runtime emits are those of the
// binary actually configured: "verified" only when the preset's flags were
// checked against the pinned CLI (TestPresetFlagsExist) and this binary's
// own help names the CLI and lists every one of them. A command: that points
// at another program (or a wrapper that hides the help) is "unverified",
// with why.
func (p *Provider) checkFlags(ctx context.Context, bin string, env []string) (verdict, detail string) {
	w := p.worker
	switch {
	case w.Name == "custom":
		return "unverified", "a custom worker's flags are its config's; nothing to check them against"
	case !w.FlagsChecked:
		return "unverified", w.Name + "'s flags come from the worker presets (docs/workers.md), not from an installed CLI"
	}
	help, call := "", ""
	for _, args := range w.HelpArgs {
		call = "`" + w.Name + " " + strings.Join(args, " ") + "`"
		out, code, ok := p.probe(ctx, bin, args, env)
		if !ok || code != 0 {
			return "unverified", call + " failed, so the flags could not be checked against " + bin
		}
		help += out
	}
	if !mentionsWord(help, w.Name) {
		return "unverified", call + " of " + bin + " does not name " + w.Name + ": command: may point at another program"
	}
	if missing := missingFlags(help, w.Flags); len(missing) > 0 {
		return "unverified", call + " of " + bin + " does not list " + strings.Join(missing, ", ")
	}
	return "verified", call + " of " + bin + " lists every flag the runtime passes"
}

// missingFlags returns the flags that do not appear as options in help.
func missingFlags(help string, flags []string) []string {
	var out []string
	for _, f := range flags {
		if !regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(f) + `([\s,=<\[]|$)`).MatchString(help) {
			out = append(out, f)
		}
	}
	return out
}

// mentionsWord reports whether s names word as a whole word, in any case.
func mentionsWord(s, word string) bool {
	return regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(word) + `\b`).MatchString(s)
}
