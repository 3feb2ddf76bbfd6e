//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// build loads a config with one cli provider from dir/agent-tools.yaml and
// builds it the way the runtime does.
func build(t testing.TB, dir, yaml string) *Provider {
	t.Helper()
	path := filepath.Join(dir, "agent-tools.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(k string) (string, bool) {
		if k == "TEST_SECRET" {
			return "s3cr3t-value", true
		}
		return os.LookupEnv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(provider.HeaderOf(cfg.Providers[0]), cfg.Providers[0].Spec, provider.Deps{ConfigDir: cfg.Dir, ProjectDir: cfg.Dir})
	if err != nil {
		t.Fatal(err)
	}
	cp := p.(*Provider)
	cp.env = minimalEnv(append(os.Environ(), "HOST_SECRET=host-secret-value"), cp.opts.Spec.Env)
	return cp
}

func need(t *testing.T, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
}

func call(t *testing.T, p *Provider, name, args string) (*provider.Result, *toolerr.Error) {
	t.Helper()
	res, err := p.Call(context.Background(), catalog.Tool{Provider: p.opts.ID, Name: name}, json.RawMessage(args))
	if err != nil {
		te, ok := toolerr.As(err)
		if !ok {
			t.Fatalf("%s: error without envelope: %v", name, err)
		}
		return nil, te
	}
	return res, nil
}

const shapes = `providers:
  - id: sh
    kind: cli
    allow: [printf, sh, sleep, seq, env, no-such-program-xyz]
    env: { CONFIGURED: "yes", TOKEN: "${TEST_SECRET}" }
    readonly: [echo]
    tools:
      - name: echo
        argv: [printf, "[%s]\n", "{a}", "{b}", "--", "{rest}"]
        params:
          a: { description: first }
          b: { type: integer, default: 7 }
          rest: { type: array }
      - name: fail
        argv: [sh, -c, "echo out; echo err >&2; exit 3"]
        readonly: true
      - name: both
        argv: [sh, -c, "echo out; echo err >&2"]
        readonly: true
      - name: slow
        argv: [sleep, "10"]
        timeout: 200ms
      - name: big
        argv: [seq, "1", "2000000"]
      - name: env
        argv: [env]
      - name: missing
        argv: [no-such-program-xyz]
      - name: inside
        argv: [printf, ok]
        cwd: link
`

func TestCallShapes(t *testing.T) {
	need(t, "printf", "sh", "sleep", "seq", "env")
	dir := t.TempDir()
	if err := os.Symlink(os.TempDir(), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	p := build(t, dir, shapes)

	// Every value is one argument: metacharacters, quotes, spaces and
	// newlines reach the program as literal bytes.
	inject := map[string]any{"a": "; touch pwned1 | $(touch pwned2) `touch pwned3` && x\ny 'q' \"d\"", "rest": []string{"-rf", "a b", "$HOME"}}
	raw, _ := json.Marshal(inject)
	res, te := call(t, p, "echo", string(raw))
	want := "[; touch pwned1 | $(touch pwned2) `touch pwned3` && x\ny 'q' \"d\"]\n[7]\n[--]\n[-rf]\n[a b]\n[$HOME]\n"
	if te != nil || res.Text != want {
		t.Fatalf("echo = %+v %v\nwant %q", res, te, want)
	}
	for _, f := range []string{"pwned1", "pwned2", "pwned3"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was created: a value went through a shell", f)
		}
	}

	tests := []struct {
		name, tool, args string
		code             toolerr.Code
		msg              string
	}{
		{"leading dash before --", "echo", `{"a":"--help"}`, toolerr.InvalidArguments, `parameter "a": starts with "-"`},
		{"negative number before --", "echo", `{"b":-1}`, toolerr.InvalidArguments, `parameter "b": starts with "-"`},
		{"NUL", "echo", `{"a":"x\u0000y"}`, toolerr.InvalidArguments, "NUL byte"},
		{"unknown argument", "echo", `{"c":1}`, toolerr.InvalidArguments, `parameter "c": is not a parameter`},
		{"not an object", "echo", `"x"`, toolerr.InvalidArguments, "must be a JSON object"},
		{"timeout", "slow", `{}`, toolerr.Timeout, `sh tool "slow" timed out after 200ms`},
		{"program missing", "missing", `{}`, toolerr.ProviderUnavailable, `"no-such-program-xyz" not found in PATH`},
		{"cwd escapes through a link", "inside", `{}`, toolerr.ProviderUnavailable, "leads outside"},
		{"unknown tool", "nope", `{}`, toolerr.UnknownTool, `no tool "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, te := call(t, p, tt.tool, tt.args)
			if te == nil || te.Code != tt.code || !strings.Contains(te.Message, tt.msg) {
				t.Fatalf("got %+v %+v, want %s %q", res, te, tt.code, tt.msg)
			}
			if tt.code == toolerr.InvalidArguments && tt.tool == "echo" && te.Details["expected_schema"] == nil {
				t.Errorf("no expected_schema in %v", te.Details)
			}
			// The same rule is the pipeline's validate stage's, before
			// confirmation (provider.ArgumentValidator); nothing runs.
			verr := p.ValidateArguments(catalog.Tool{Name: tt.tool}, json.RawMessage(tt.args))
			if vte, _ := toolerr.As(verr); tt.code == toolerr.InvalidArguments && (vte == nil || vte.Code != tt.code || !strings.Contains(vte.Message, tt.msg)) {
				t.Errorf("ValidateArguments = %v", verr)
			} else if tt.code != toolerr.InvalidArguments && tt.code != toolerr.UnknownTool && verr != nil {
				t.Errorf("ValidateArguments rejected what only running can: %v", verr)
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Call(ctx, catalog.Tool{Name: "slow"}, nil); err == nil {
		t.Error("a cancelled call succeeded")
	} else if te, _ := toolerr.As(err); te == nil || te.Code != toolerr.Cancelled {
		t.Errorf("cancelled call = %v", err)
	}

	res, te = call(t, p, "fail", `{}`)
	if te != nil || !res.IsError || res.Details["exit_code"] != 3 || res.Details["stderr_tail"] != "err\n" || res.Text != "out\n[stderr]\nerr\n" {
		t.Errorf("fail = %+v %v", res, te)
	}
	res, te = call(t, p, "both", `{}`)
	if te != nil || res.IsError || res.Text != "out\n[stderr]\nerr\n" {
		t.Errorf("both = %+v %v", res, te)
	}
	res, te = call(t, p, "big", `{}`)
	if te != nil || !strings.Contains(res.Text, "[stdout truncated: ") || len(res.Text) > 9<<20 {
		t.Errorf("big: %d chars, err %v, tail %q", len(res.Text), te, res.Text[max(0, len(res.Text)-80):])
	}

	// The child sees PATH/HOME/locale and the configured env, nothing else.
	res, te = call(t, p, "env", `{}`)
	if te != nil {
		t.Fatal(te)
	}
	for line := range strings.Lines(res.Text) {
		k, _, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case k == "PATH", k == "HOME", k == "LANG", k == "TMPDIR", k == "TZ", strings.HasPrefix(k, "LC_"), k == "CONFIGURED", k == "TOKEN",
			k == "AGENTTOOLS_RUN": // proc's run marker (finds setsid descendants)
		default:
			t.Errorf("child environment has %q", k)
		}
	}
	if !strings.Contains(res.Text, "CONFIGURED=yes") || strings.Contains(res.Text, "host-secret-value") {
		t.Errorf("env = %s", res.Text)
	}
}

func TestToolsAndSchema(t *testing.T) {
	p := build(t, t.TempDir(), shapes)
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]catalog.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	echo := byName["echo"]
	if !echo.ReadOnly || byName["slow"].ReadOnly || !byName["fail"].ReadOnly || byName["slow"].Timeout.String() != "200ms" {
		t.Errorf("readonly/timeout wrong: %+v", tools)
	}
	want := `{"additionalProperties":false,"properties":{"a":{"description":"first","pattern":"^(?:[^-]|$)","type":"string"},"b":{"default":7,"minimum":0,"type":"integer"},"rest":{"items":{"type":"string"},"type":"array"}},"type":"object"}`
	if string(echo.InputSchema) != want {
		t.Errorf("schema:\n%s\nwant\n%s", echo.InputSchema, want)
	}
	if echo.Description != "Runs printf." {
		t.Errorf("description = %q", echo.Description)
	}
	info := p.Info()
	if info.Kind != "cli" || !strings.HasPrefix(info.Description, "Command-line programs: printf, sh") || !info.RequireConfirm {
		t.Errorf("info = %+v", info)
	}
	for _, tl := range tools {
		if strings.Contains(string(tl.InputSchema)+tl.Description, "s3cr3t") {
			t.Errorf("a secret reached tool %s", tl.Name)
		}
	}
}

func TestDiagnostics(t *testing.T) {
	need(t, "git")
	dir := t.TempDir()
	p := build(t, dir, `providers:
  - id: x
    kind: cli
    allow: [git, no-such-program-xyz, ./tools/hang, ./tools/quiet]
    version: { git: [--version], ./tools/hang: [--version] }
    tools:
      - name: v
        argv: [git, status]
        params: { unused: {} }
`)
	p.opts.ProbeTimeout = 300 * 1e6 // 300ms
	if err := os.MkdirAll(filepath.Join(dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A program whose --version hangs: the probe gives up, and a program
	// that wrote a marker for anything but --version would be caught.
	hang := "#!/bin/sh\n[ \"$1\" = --version ] || touch \"" + filepath.Join(dir, "ran") + "\"\nexec sleep 10\n"
	if err := os.WriteFile(filepath.Join(dir, "tools", "hang"), []byte(hang), 0o755); err != nil {
		t.Fatal(err)
	}
	// A program without version arguments in the config is never run.
	quiet := "#!/bin/sh\ntouch \"" + filepath.Join(dir, "quiet-ran") + "\"\n"
	if err := os.WriteFile(filepath.Join(dir, "tools", "quiet"), []byte(quiet), 0o755); err != nil {
		t.Fatal(err)
	}
	got := map[string]provider.Diagnostic{}
	for _, d := range p.Diagnostics() {
		got[d.Item] = d
	}
	if d := got["git"]; d.Status != "ok" || !strings.Contains(d.Reason, "/git: git version ") || strings.Contains(d.Reason, "\n") {
		t.Errorf("git: %+v", d)
	}
	if d := got["no-such-program-xyz"]; d.Status != "failed" || d.Reason != `"no-such-program-xyz" not found in PATH` {
		t.Errorf("missing: %+v", d)
	}
	if d := got["./tools/hang"]; d.Status != "warning" || !strings.Contains(d.Reason, "did not answer within 300ms") {
		t.Errorf("hang: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("doctor ran a program with something other than --version")
	}
	if d := got["./tools/quiet"]; d.Status != "ok" || !strings.Contains(d.Reason, "version not probed") {
		t.Errorf("quiet: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "quiet-ran")); err == nil {
		t.Error("doctor ran a program the config gave no version arguments")
	}
	if len(got) != 4 {
		t.Errorf("diagnostics = %v", got)
	}
}

func TestMinimalEnv(t *testing.T) {
	got := minimalEnv([]string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "SECRET=x", "LD_PRELOAD=x.so", "bad"}, map[string]string{"PATH": "/opt/bin", "K": "v"})
	if s := strings.Join(got, " "); s != "HOME=/h K=v LC_ALL=C PATH=/opt/bin" {
		t.Errorf("minimalEnv = %s", s)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, want, err string }{
		{"tool", dir, exe, ""},
		{"tool", "relative:" + dir, exe, ""},
		{"tool", "relative", "", `"tool" not found in PATH`},
		{"./tool", "", exe, ""},
		{exe, "", exe, ""},
		{"./plain", "", "", "plain: not executable"},
		{"./nope", "", "", "nope: not found"},
		{"./", "", "", "not a regular file"},
	}
	for _, tt := range tests {
		got, err := lookPath(tt.name, tt.path, dir)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("lookPath(%q, %q) = %q, %v", tt.name, tt.path, got, err)
		}
	}
}
