package workers

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// realCLI finds a CLI installed from interop/package-lock.json.
func realCLI(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "interop", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed (run npm ci in interop/): %v", name, err)
	}
	return p
}

// quiet runs a real CLI with a fresh HOME, auto-update and telemetry off,
// and a deadline.
func quiet(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	home := t.TempDir()
	env := append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CODEX_HOME=" + filepath.Join(home, ".codex"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "CI=1", "NO_COLOR=1"}, quietEnv...)
	res, err := proc.Run(context.Background(), proc.Spec{Path: bin, Args: args, Env: env, Dir: home, Timeout: 3 * time.Minute, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut {
		t.Fatalf("%s %v timed out", bin, args)
	}
	return proc.Text(res.Stdout) + proc.Text(res.Stderr), res.ExitCode
}

// TestPresetFlagsExist: every flag a preset can emit appears in the real
// CLI's own help (an earlier adapter shipped flags written from memory, and they were wrong).
func TestPresetFlagsExist(t *testing.T) {
	for _, name := range []string{"codex", "claude", "gemini"} {
		t.Run(name, func(t *testing.T) {
			w := presets[name]
			bin := realCLI(t, name)
			out, code := quiet(t, bin, w.VersionArgs...)
			if code != 0 || !regexp.MustCompile(`\d+\.\d+\.\d+`).MatchString(out) {
				t.Fatalf("--version: exit %d\n%s", code, out)
			}
			help := ""
			for _, args := range w.HelpArgs {
				out, code := quiet(t, bin, args...)
				if code != 0 {
					t.Fatalf("%v: exit %d\n%s", args, code, out)
				}
				help += out
			}
			for _, f := range missingFlags(help, w.Flags) {
				t.Errorf("flag %s is not in `%s %v`", f, name, w.HelpArgs)
			}
			if !mentionsWord(help, name) {
				t.Errorf("`%s %v` does not name %s", name, w.HelpArgs, name)
			}
			for _, e := range w.Efforts {
				if !regexp.MustCompile(`\b` + e + `\b`).MatchString(help) {
					t.Errorf("effort %q is not in the help", e)
				}
			}
		})
	}
	if presets["agy"].FlagsChecked {
		t.Error("agy is not on npm: its flags cannot be checked and must say so")
	}
}

// TestPresetModeValuesExist: the sandbox / permission / approval values.
func TestPresetModeValuesExist(t *testing.T) {
	for name, values := range map[string][]string{
		"codex":  {"read-only", "workspace-write"},
		"claude": {"plan", "acceptEdits"},
		"gemini": {"plan", "auto_edit"},
	} {
		bin := realCLI(t, name)
		help := ""
		for _, args := range presets[name].HelpArgs {
			out, _ := quiet(t, bin, args...)
			help += out
		}
		for _, v := range values {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`).MatchString(help) {
				t.Errorf("%s: value %q not in help", name, v)
			}
		}
	}
}

// TestStatusAgainstRealLoggedOutCLIs: installed, version read, auth
// required or unverified (never guessed as ok).
func TestStatusAgainstRealLoggedOutCLIs(t *testing.T) {
	for _, name := range []string{"codex", "claude", "gemini"} {
		t.Run(name, func(t *testing.T) {
			bin := realCLI(t, name)
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("CODEX_HOME", filepath.Join(home, ".codex"))
			root := newRepo(t, nil)
			pc := config.Provider{ID: name, Kind: "workers", Enabled: true}
			spec := &Spec{Preset: name, Command: bin, Cwd: root}
			pc.Spec = spec
			p, err := New(provider.HeaderOf(pc), spec, provider.Deps{ProjectDir: root})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			st := p.status(ctx)
			if !st.Installed || !versionRE.MatchString(st.Version) || strings.Contains(st.Version, "WARNING") || st.Flags != "verified" {
				t.Fatalf("%+v", st)
			}
			if st.Auth != "required" && st.Auth != "unverified" {
				t.Fatalf("auth %q for a logged-out CLI (%s)", st.Auth, st.AuthSource)
			}
			if name == "codex" && st.Auth != "required" {
				t.Fatalf("codex login status should report required: %s", st.AuthSource)
			}
			t.Logf("%s: version %q auth %s (%s), models from %s", name, st.Version, st.Auth, st.AuthSource, st.ModelSource)
		})
	}
}
