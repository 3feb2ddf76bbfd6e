package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// script writes an executable .agents/tools script in dir.
func script(t *testing.T, dir, name, body string) {
	t.Helper()
	d := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

const deployScript = "#!/bin/sh\n# @description Deploy the app\n# @readonly\necho deployed\n"

// Regression: a bad --addr exited 1 after loading every
// provider; it is a usage error (2) found before any work.
func TestServeBadAddrIsAUsageError(t *testing.T) {
	for _, addr := range []string{"localhost:abc", "127.0.0.1:99999", "127.0.0.1", "local host:80"} {
		env, _, stderr := testEnv(t, nil)
		script(t, env.Dir, "broken.sh", deployScript) // would be logged as skipped if providers loaded
		code := Run(context.Background(), env, []string{"serve", "--http", "--addr", addr})
		if code != ExitUsage || !strings.Contains(stderr.String(), "invalid --addr") || strings.Contains(stderr.String(), "broken.sh") {
			t.Errorf("%s: exit %d\n%s", addr, code, stderr)
		}
	}
}

// Regression: warnings about skipped scripts cut through
// the list/search tables; they come once, after the table.
func TestListWarningsComeAfterTheTableOnce(t *testing.T) {
	for _, cmd := range [][]string{{"list"}, {"search", "deploy"}} {
		env, out, _ := testEnv(t, nil)
		env.Stderr = out // a terminal shows both streams interleaved
		script(t, env.Dir, "deploy-app", deployScript)
		script(t, env.Dir, "broken.sh", deployScript)
		if code := Run(context.Background(), env, cmd); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", cmd, code, out)
		}
		text := out.String()
		table := strings.Index(text, "deploy-app")
		warn := strings.Index(text, "broken.sh")
		if table < 0 || warn < table || strings.Count(text, "broken.sh") != 1 {
			t.Errorf("%v: want the table, then one warning:\n%s", cmd, text)
		}
	}
}

// Regression: `call` with an unknown name said "use a name
// from did_you_mean" and showed none; a name from another scheme now points
// at the tool, and JSON output is not HTML-escaped.
func TestCallUnknownNameTeaches(t *testing.T) {
	env, _, stderr := testEnv(t, nil)
	script(t, env.Dir, "deploy-app", deployScript)
	if code := Run(context.Background(), env, []string{"call", "deployz2dzapp"}); code != ExitFailed ||
		!strings.Contains(stderr.String(), "did you mean: deploy-app") || !strings.Contains(stderr.String(), "run: agent-tools call deploy-app") {
		t.Errorf("lossless name: exit %d\n%s", code, stderr)
	}
	env, out, _ := testEnv(t, nil)
	script(t, env.Dir, "deploy-app", deployScript)
	code := Run(context.Background(), env, []string{"call", "nothing_like_it", "--json"})
	if code != ExitFailed || strings.Contains(out.String(), "did_you_mean") && strings.Contains(out.String(), "Use a name from did_you_mean") {
		t.Errorf("unknown name: exit %d\n%s", code, out)
	}
	if strings.Contains(out.String(), `\u003c`) || !strings.Contains(out.String(), "<provider>") {
		t.Errorf("JSON is HTML-escaped or lacks the search hint:\n%s", out)
	}
}

// Regression: `config validate --json` used File/Line/Col
// while every other JSON output is lowercase.
func TestConfigValidateJSONKeysAreLowercase(t *testing.T) {
	env, out, _ := testEnv(t, nil)
	mustWrite(t, filepath.Join(env.Dir, "agent-tools.yaml"), []byte("mode: fast\n"), 0o644)
	if code := Run(context.Background(), env, []string{"config", "validate", "--json"}); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	var v struct {
		Errors []map[string]any `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out.String()), &v); err != nil || len(v.Errors) == 0 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, k := range []string{"file", "line", "col", "message"} {
		if _, ok := v.Errors[0][k]; !ok {
			t.Errorf("error lacks %q: %v", k, v.Errors[0])
		}
	}
}

func TestInitTwiceSaysTheFileExists(t *testing.T) {
	env, _, stderr := testEnv(t, nil)
	if code := Run(context.Background(), env, []string{"init"}); code != ExitOK {
		t.Fatalf("first init: %d %s", code, stderr)
	}
	code := Run(context.Background(), env, []string{"init"})
	if code == ExitOK || !strings.Contains(stderr.String(), "agent-tools.yaml already exists") || !strings.Contains(stderr.String(), "--force") {
		t.Fatalf("second init: exit %d\n%s", code, stderr)
	}
}

// doctor names flat names a client would refuse, rules that protect
// nothing, and how to mark read-only tools.
func TestDoctorExplainsNames(t *testing.T) {
	env, out, _ := testEnv(t, nil)
	long := strings.Repeat("very_long_", 7) + "deploy"
	script(t, env.Dir, long, deployScript)
	mustWrite(t, filepath.Join(env.Dir, "agent-tools.yaml"), []byte("mode: flat\npolicy:\n  deny: [\"gh_*\", \"deployz2dzapp\"]\n"), 0o644)
	script(t, env.Dir, "deploy-app", deployScript)
	Run(context.Background(), env, []string{"doctor"})
	text := out.String()
	for _, want := range []string{
		"flat mode does not publish it (76 characters, over flat.maxNameLength 64)",
		"rename: {\"" + long + "\": <shorter name>}",
		`policy.deny rule "gh_*" matches no loaded tool`,
		`policy.deny rule "deployz2dzapp" matches no loaded tool, so it protects nothing; it would match "deployz2dzapp" (naming: lossless)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor lacks %q:\n%s", want, text)
		}
	}
}
