package workers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// TestJobLogFolderIsCreated: the README's jobLog: .agent-tools/jobs.jsonl
// lives in a folder a fresh project does not have; the first job creates it,
// and doctor checks the path.
func TestJobLogFolderIsCreated(t *testing.T) {
	root := newRepo(t, map[string]string{"a.txt": "a\n"})
	logPath := filepath.Join(root, ".agent-tools", "jobs.jsonl")
	p := newProvider(t, "codex", root, func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.JobLog = logPath })
	if _, te := call(t, p, map[string]any{"goal": "look", "mode": "analyze"}); te != nil {
		t.Fatal(te.JSON())
	}
	b, err := os.ReadFile(logPath)
	if err != nil || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("job log: %v %q", err, b)
	}
	if d := diag(p.Diagnostics(), "jobLog"); d == nil || d.Status != "ok" {
		t.Fatalf("doctor: %+v", p.Diagnostics())
	}

	// A path whose folder cannot exist (its parent is a file): doctor says so.
	blocked := filepath.Join(root, "a.txt", "jobs.jsonl")
	q := newProvider(t, "codex", root, func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.JobLog = blocked })
	if d := diag(q.Diagnostics(), "jobLog"); d == nil || d.Status != "warning" || !strings.Contains(d.Reason, "cannot be written") {
		t.Fatalf("doctor: %+v", q.Diagnostics())
	}
}

func diag(ds []provider.Diagnostic, item string) *provider.Diagnostic {
	for i := range ds {
		if ds[i].Item == item {
			return &ds[i]
		}
	}
	return nil
}

// TestTeachingTextNamesRealFields: hints name fields where they are (the
// error's own fields, not "details."), doctor names the error code as run
// answers it, and an envelope's warnings are [] rather than null.
func TestTeachingTextNamesRealFields(t *testing.T) {
	root := newRepo(t, map[string]string{"a.txt": "a\n"})
	_, te := call(t, newProvider(t, "claude", root), map[string]any{"goal": "g", "mode": "analyze", "effort": "ultra"})
	if te == nil || strings.Contains(te.Hint, "details.") || !strings.Contains(te.Hint, "supported_efforts") {
		t.Fatalf("hint: %v", te)
	}
	var body map[string]map[string]any
	if err := json.Unmarshal([]byte(te.JSON()), &body); err != nil || body["error"]["supported_efforts"] == nil {
		t.Fatalf("supported_efforts is not a field of the error: %s", te.JSON())
	}

	missing := func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Command = "/no/such/codex" }
	d := newProvider(t, "codex", root, missing).Diagnostics()
	if !strings.Contains(d[0].Reason, "EXECUTABLE_NOT_FOUND") {
		t.Fatalf("doctor: %+v", d)
	}

	res, err := newProvider(t, "codex", root).Call(context.Background(), tool("run"), json.RawMessage(`{"goal":"look","mode":"analyze"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, `"warnings":[]`) {
		t.Fatalf("warnings not []: %s", res.Text)
	}
}

// TestFlagsVerifiedOnlyForTheExpectedCLI: a command: pointing at another
// program is not "verified" because the preset's flags were checked once.
func TestFlagsVerifiedOnlyForTheExpectedCLI(t *testing.T) {
	root := newRepo(t, nil)
	st := newProvider(t, "codex", root).status(context.Background())
	if st.Flags != "verified" {
		t.Fatalf("fake codex lists every flag: %s (%s)", st.Flags, st.FlagsDetail)
	}
	other := filepath.Join(t.TempDir(), "other-tool")
	if err := os.WriteFile(other, []byte("#!/bin/sh\necho 'other-tool 1.2.3: usage: other-tool [-v]'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, preset := range []string{"codex", "claude", "gemini"} {
		p := newProvider(t, preset, root, func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Command = other })
		st := p.status(context.Background())
		if st.Flags != "unverified" || !strings.Contains(st.FlagsDetail, "does not name "+preset) || !anyContains(st.Warnings, "flags unverified") {
			t.Errorf("%s: %s (%s) %v", preset, st.Flags, st.FlagsDetail, st.Warnings)
		}
		if d := diag(p.Diagnostics(), "flags"); d == nil || d.Status != "warning" {
			t.Errorf("%s doctor: %+v", preset, p.Diagnostics())
		}
	}
	// The right name but a missing flag: still unverified, saying which.
	old := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(old, []byte("#!/bin/sh\necho 'Usage: claude [options]'; echo '  -p, --print --output-format --model'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	st = newProvider(t, "claude", root, func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Command = old }).status(context.Background())
	if st.Flags != "unverified" || !strings.Contains(st.FlagsDetail, "--effort") {
		t.Fatalf("%s (%s)", st.Flags, st.FlagsDetail)
	}
}

// TestValidateArgumentsBeforeConfirmation: every check run makes before a
// process starts is also ValidateArguments' (the pipeline's validate stage),
// so no person confirms a call that cannot run.
func TestValidateArgumentsBeforeConfirmation(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	routed := func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Models = []string{"m1"} }
	for _, tt := range []struct {
		name, preset, args, code string
		opts                     []opt
	}{
		{"implement without scope", "codex", `{"goal":"g","mode":"implement"}`, "INVALID_ARGUMENTS", nil},
		{"escape", "codex", `{"goal":"g","mode":"implement","allowed_paths":["../x"]}`, "PATH_OUTSIDE_PROJECT", nil},
		{"shell in verify", "codex", `{"goal":"g","mode":"implement","allowed_paths":["src"],"verify_commands":["a && b"]}`, "INVALID_ARGUMENTS", nil},
		{"bad timeout", "codex", `{"goal":"g","mode":"analyze","timeout":"soon"}`, "INVALID_ARGUMENTS", nil},
		{"bad mode", "codex", `{"goal":"g","mode":"write"}`, "INVALID_ARGUMENTS", nil},
		{"effort gemini lacks", "gemini", `{"goal":"g","mode":"analyze","effort":"high"}`, "INVALID_EFFORT", nil},
		{"model not routed", "codex", `{"goal":"g","mode":"analyze","model":"m2"}`, "REQUESTED_MODEL_UNAVAILABLE", []opt{routed}},
		{"valid", "codex", `{"goal":"g","mode":"implement","allowed_paths":["src"]}`, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, tt.preset, root, tt.opts...)
			err := p.ValidateArguments(tool("run"), json.RawMessage(tt.args))
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.code+":") {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
		})
	}
	if err := newProvider(t, "codex", root).ValidateArguments(tool("status"), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
}

// TestCallVerifyCommandsNeedAPerson: verification commands are the config's;
// a call's own need a person's approval (the shell-operator filter cannot
// stop python3 -c "exec(...)").
func TestCallVerifyCommandsNeedAPerson(t *testing.T) {
	root := newRepo(t, nil)
	p := newProvider(t, "codex", root, func(_ *config.Provider, w *Spec, _ *provider.Deps) {
		w.Verify = []string{"go test ./...", "make lint"}
	})
	for args, want := range map[string]bool{
		`{"goal":"g","mode":"implement","allowed_paths":["src"],"verify_commands":["python3 -c \"exec(b64decode('aW1wb3J0IG9z'))\""]}`: true,
		`{"goal":"g","mode":"implement","allowed_paths":["src"],"verify_commands":["go test ./...","rm -rf x"]}`:                       true,
		`{"goal":"g","mode":"implement","allowed_paths":["src"],"verify_commands":["go  test   ./..."]}`:                               false,
		`{"goal":"g","mode":"implement","allowed_paths":["src"]}`:                                                                      false,
		`{"goal":"g","mode":"implement","allowed_paths":["src"],"skip_verification":true,"verify_commands":["x"]}`:                     false,
		`{"goal":"g","mode":"analyze","verify_commands":["x"]}`:                                                                        false,
	} {
		reason, got := p.NeedsHumanApproval(tool("run"), json.RawMessage(args))
		if got != want || (got && !strings.Contains(reason, "verify_commands")) {
			t.Errorf("%s: %v %q", args, got, reason)
		}
	}
	// The config's list is what runs when the call gives none.
	if _, err := New(provider.Header{ID: "bad"}, &Spec{Preset: "codex", Verify: []string{"a | b"}}, provider.Deps{ProjectDir: root}); err == nil {
		t.Fatal("a verify: entry with a shell operator was accepted")
	}
}

// TestConfiguredVerifyRuns: with no verify_commands in the call, the config's
// verify: list is what runs.
func TestConfiguredVerifyRuns(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	p := newProvider(t, "codex", root, func(_ *config.Provider, w *Spec, _ *provider.Deps) {
		w.Verify = []string{"test -f src/missing.go"}
	})
	r, te := call(t, p, map[string]any{"goal": "fake:write=src/a.go", "mode": "implement", "allowed_paths": []string{"src"}})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if strings.Join(r.TestsOrChecksRun, ",") != "test -f src/missing.go" || r.ErrorCategory != "verification_failed" {
		t.Fatalf("%+v", r)
	}
}
