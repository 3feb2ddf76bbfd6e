package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestREADMETour runs the README's five-minute tour as printed: its
// agent-tools.yaml, the commands of "Check it" and the calls, in a fresh
// git repository. The providers that need the network (npx fetching an
// MCP server, the petstore's document) are skipped with the reason; the
// rest of the YAML is used as written.
func TestREADMETour(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "## A five-minute tour")
	if start < 0 {
		t.Fatal(`README has no "## A five-minute tour"`)
	}
	tour := readme[start:]
	if end := strings.Index(tour[3:], "\n## "); end >= 0 {
		tour = tour[:end+3]
	}
	block := func(lang string) string {
		_, rest, ok := strings.Cut(tour, "```"+lang+"\n")
		if !ok {
			t.Fatalf("the tour has no %s block", lang)
		}
		body, _, _ := strings.Cut(rest, "```")
		return body
	}
	tourYAML, calls := block("yaml"), block("sh")
	// The doctor line the tour promises, and the commands it names.
	promise := regexp.MustCompile("`(git +git +ok +\\S+: git version [^`]+)`").FindStringSubmatch(tour)
	if promise == nil {
		t.Fatal("the tour no longer promises a doctor line for git")
	}
	for _, cmd := range []string{"`agent-tools config validate`", "`agent-tools doctor`", "`agent-tools list`"} {
		if !strings.Contains(tour, cmd) {
			t.Fatalf("the tour no longer names %s", cmd)
		}
	}

	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(tourYAML), &doc); err != nil {
		t.Fatalf("the tour's YAML: %v", err)
	}
	top := doc.Content[0]
	var offline []string
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "providers" {
			continue
		}
		list := top.Content[i+1]
		kept := list.Content[:0]
		for _, p := range list.Content {
			id, why := "", ""
			for j := 0; j+1 < len(p.Content); j += 2 {
				k, v := p.Content[j].Value, p.Content[j+1].Value
				switch {
				case k == "id":
					id = v
				case k == "command" && v == "npx":
					why = "npx downloads its MCP server from the npm registry (network)"
				case k == "spec" && strings.HasPrefix(v, "http"):
					why = "its OpenAPI document is at " + v + " (network)"
				}
			}
			if why != "" {
				offline = append(offline, id)
				t.Run("provider "+id, func(t *testing.T) { t.Skip("needs the network: " + why) })
				continue
			}
			kept = append(kept, p)
		}
		list.Content = kept
	}
	if len(offline) != 2 {
		t.Fatalf("expected the tour's two network providers (npx, petstore), found %v", offline)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the tour's git provider cannot run")
	}
	offlineYAML, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}

	// "In a git repository": one commit, and a modified tracked file for
	// the tour's commit.
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("config", "user.name", "Tour")
	git("config", "user.email", "tour@example.com")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "notes.txt")
	git("commit", "-q", "-m", "first")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), offlineYAML, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(line string) (int, string, string) {
		t.Helper()
		args := shellWords(t, line)
		if len(args) == 0 || args[0] != "agent-tools" {
			t.Fatalf("not an agent-tools command: %q", line)
		}
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir, LookupEnv: os.LookupEnv}
		code := Run(ctx, env, args[1:])
		return code, out.String(), errb.String()
	}

	// Check it.
	if code, out, errs := run("agent-tools config validate"); code != ExitOK || !strings.Contains(out, ": ok (mode progressive") {
		t.Fatalf("config validate: %d\n%s%s", code, out, errs)
	}
	code, out, errs := run("agent-tools doctor")
	if code != ExitOK {
		t.Fatalf("doctor: %d\n%s%s", code, out, errs)
	}
	// The promised line, with this machine's path and version.
	if !regexp.MustCompile(`(?m)^git +git +ok +\S*git(\.exe)?: git version \S+`).MatchString(out) {
		t.Errorf("doctor does not print the tour's promised line (%s):\n%s", promise[1], out)
	}
	if strings.Contains(out, "version not probed") || strings.Contains(errs, "level=") {
		t.Errorf("doctor:\n%s%s", out, errs)
	}
	if code, out, errs := run("agent-tools list"); code != ExitOK || !regexp.MustCompile(`(?m)^git_log +git +yes`).MatchString(out) {
		t.Errorf("list: %d\n%s%s", code, out, errs)
	}

	// The calls, as printed: the comment says what each does.
	lines := strings.Split(strings.TrimSpace(calls), "\n")
	if len(lines) != 3 {
		t.Fatalf("the tour's calls changed: %q", lines)
	}
	if code, out, errs := run(lines[0]); code != ExitOK || !strings.Contains(out, "first") {
		t.Errorf("%s: %d\n%s%s", lines[0], code, out, errs)
	}
	if code, _, errs := run(lines[1]); code != ExitFailed || !strings.Contains(errs, "CONFIRMATION_REQUIRED") {
		t.Errorf("%s: %d, want refused\n%s", lines[1], code, errs)
	}
	if code, out, errs := run(lines[2]); code != ExitOK {
		t.Errorf("%s: %d\n%s%s", lines[2], code, out, errs)
	}
	if code, out, _ := run("agent-tools call git_log --args '{\"count\": 1}'"); code != ExitOK || !strings.Contains(out, "wip") {
		t.Errorf("the confirmed commit is not in the log:\n%s", out)
	}
	// The tour leaves nothing but the commit behind: no state file.
	if _, err := os.Stat(filepath.Join(dir, "agent-tools.pins.json")); err == nil {
		t.Error("the tour left agent-tools.pins.json in the repository")
	}
}

// shellWords splits a README command line as sh would for the forms the
// README uses: words, single-quoted strings, and a trailing # comment.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(line)
		case c == '"' || c == '\\' || c == '$' || c == '`':
			t.Fatalf("shellWords: %q uses %q, which this test does not interpret", line, c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("shellWords: unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
