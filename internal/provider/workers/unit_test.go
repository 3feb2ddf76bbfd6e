package workers

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite testdata goldens")

func TestNormalizePath(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	outside := t.TempDir()
	writeFile(t, root, "src/a.go", "x")
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "src"), filepath.Join(root, "inside")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want string
		bad      bool
	}{
		{"src/a.go", "src/a.go", false},
		{"./src/", "src", false},
		{"src//new/file.txt", "src/new/file.txt", false},
		{".", ".", false},
		{filepath.Join(root, "src"), "src", false},
		{"inside/a.go", "inside/a.go", false},
		{"", "", true},
		{"../x", "", true},
		{"src/../../x", "", true},
		{"src/../a.go", "", true}, // any ".." is rejected, even one that stays inside
		{`src\..\..\x`, "", true},
		{"/etc/passwd", "", true},
		{outside, "", true},
		{"escape/file", "", true},
		{"escape", "", true},
		{"C:/Windows", "", true},
		{`\\server\share`, "", true},
		{"a\x00b", "", true},
	}
	for _, tt := range tests {
		got, err := NormalizePath(root, tt.in)
		if tt.bad {
			if err == nil || !errors.Is(err, errOutside) {
				t.Errorf("NormalizePath(%q) = %q, %v; want rejection", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzNormalizePath fuzzes the lexical part (the symlink check is a file
// system walk, covered by TestNormalizePath).
func FuzzNormalizePath(f *testing.F) {
	root := "/project/root"
	for _, s := range []string{"src/a.go", "../x", "/etc", "a/./b/../c", `C:\x`, ".", "a//b/", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if len(p) > 256 {
			return
		}
		got, err := normalizeLexical(root, p)
		if err != nil {
			return
		}
		// An accepted path is clean, relative, slash-separated and inside root.
		if got == "" || strings.HasPrefix(got, "/") || strings.Contains(got, "\\") && !strings.Contains(p, "\\") {
			t.Fatalf("NormalizePath(%q) = %q", p, got)
		}
		if got != "." && filepath.ToSlash(filepath.Clean(got)) != got {
			t.Fatalf("not clean: %q → %q", p, got)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == ".." {
				t.Fatalf("escapes: %q → %q", p, got)
			}
		}
		if _, ok := within(root, filepath.Join(root, got)); !ok {
			t.Fatalf("outside root: %q → %q", p, got)
		}
	})
}

func TestScopeLocks(t *testing.T) {
	var l scopeLocks
	rel1, c := l.acquire("j1", []string{"src/api"})
	if c != nil {
		t.Fatal(c)
	}
	if _, c := l.acquire("j2", []string{"src/ui"}); c != nil {
		t.Fatalf("disjoint scopes conflict: %+v", c)
	}
	tests := []struct {
		scopes []string
		holder string
	}{
		{[]string{"src/api/x.go"}, "j1"},
		{[]string{"src"}, "j1"},
		{[]string{"."}, "j1"},
		{[]string{"src/ui/b"}, "j2"},
		{[]string{"src/apix"}, ""}, // a prefix of a name is not a parent directory
		{[]string{"docs"}, ""},
	}
	for i, tt := range tests {
		id := "t" + string(rune('a'+i))
		rel, c := l.acquire(id, tt.scopes)
		switch {
		case tt.holder == "" && c != nil:
			t.Errorf("%v: unexpected conflict with %s", tt.scopes, c.Holder)
		case tt.holder != "" && (c == nil || c.Holder != tt.holder):
			t.Errorf("%v: conflict %+v, want holder %s", tt.scopes, c, tt.holder)
		}
		if rel != nil {
			rel()
		}
	}
	rel1()
	if _, c := l.acquire("j3", []string{"src/api"}); c != nil {
		t.Fatalf("released scope still held by %s", c.Holder)
	}
	if got := l.concurrent("j3", time.Now().Add(-time.Hour)); len(got["j1"]) == 0 || len(got["j2"]) == 0 {
		t.Fatalf("history lost concurrent scopes: %v", got)
	}
}

func TestPromptAndArgvGolden(t *testing.T) {
	r := &request{Goal: "Make the uploader retry 502s with exponential backoff.", Mode: "implement",
		Model: "gpt-5.6-sol", Effort: "high", Contract: "export function upload(f: File): Promise<Result>",
		AcceptanceCriteria: []string{"Retries up to 3 times", "Existing callers unchanged"}, Tests: []string{"npm test -- upload"}}
	prompt := assemblePrompt(r, []string{"src/upload.ts", "tests/upload.test.ts"}, []string{"src/auth"}, []string{"src/http.ts"})
	if prompt != assemblePrompt(r, []string{"src/upload.ts", "tests/upload.test.ts"}, []string{"src/auth"}, []string{"src/http.ts"}) {
		t.Fatal("prompt assembly is not deterministic")
	}
	for _, name := range []string{"codex", "claude", "gemini", "agy"} {
		for _, mode := range []string{"analyze", "implement"} {
			w := presets[name]
			model, effort := r.Model, r.Effort
			if name == "gemini" || name == "agy" {
				effort = ""
			}
			inv := invocation{Mode: mode, Model: model, Effort: effort, Project: "/project", Prompt: prompt,
				OutputFile: "/tmp/job/answer.txt", Timeout: 30 * time.Minute}
			var b strings.Builder
			b.WriteString("argv: " + w.Bin + " " + shellJoin(w.Argv(inv)) + "\n")
			b.WriteString("transport: " + w.Transport + "\n")
			if w.Transport == "stdin" {
				b.WriteString("stdin:\n" + prompt)
			}
			golden(t, filepath.Join("testdata", "golden", name+"_"+mode+".txt"), b.String())
		}
	}
	golden(t, filepath.Join("testdata", "golden", "prompt_analyze.txt"),
		assemblePrompt(&request{Goal: "Explain how session refresh works and where it can race.", Mode: "analyze"}, nil, nil, []string{"src/auth/session.ts"}))
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden (run go test -update): %v", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test -update to accept):\n--- got\n%s", path, got)
	}
}

func TestParseOutput(t *testing.T) {
	codex := presets["codex"].Answer
	tests := []struct {
		name, format, out, file string
		rule                    answerRule
		answer, workerErr       string
		fail                    bool
	}{
		{"codex events", "jsonl", `{"type":"item.completed","item":{"type":"reasoning","text":"think"}}` + "\n" +
			`{"type":"item.completed","item":{"type":"agent_message","text":"final"}}`, "", codex, "final", "", false},
		{"codex output file wins", "jsonl", `{"type":"turn.completed"}`, "from file\n", codex, "from file", "", false},
		{"codex reasoning only", "jsonl", `{"type":"item.completed","item":{"type":"reasoning","text":"think"}}`, "", codex, "", "", true},
		{"codex turn failed", "jsonl", `{"type":"turn.failed","error":{"message":"model not found"}}`, "", codex, "", "model not found", false},
		{"jsonl all garbage", "jsonl", "not json\nstill not", "", codex, "", "", true},
		{"jsonl banner then events", "jsonl", "banner\n" + `{"type":"item.completed","item":{"type":"agent_message","text":"ok"}}`, "", codex, "ok", "", false},
		{"jsonl empty", "jsonl", "", "", codex, "", "", true},
		{"claude result", "json", `{"type":"result","is_error":false,"result":"done"}`, "", presets["claude"].Answer, "done", "", false},
		{"claude error", "json", `{"type":"result","is_error":true,"result":"Invalid API key"}`, "", presets["claude"].Answer, "", "Invalid API key", false},
		{"json with preamble", "json", "Loaded cached credentials.\n" + `{"response":"hi"}`, "", presets["gemini"].Answer, "hi", "", false},
		{"gemini error", "json", `{"error":{"message":"quota"}}`, "", presets["gemini"].Answer, "", "quota", false},
		{"json truncated", "json", `{"response":"hi"`, "", presets["gemini"].Answer, "", "", true},
		{"json array", "json", `[1,2]`, "", presets["gemini"].Answer, "", "", true},
		{"json missing answer", "json", `{"other":1}`, "", presets["gemini"].Answer, "", "", true},
		{"agy alternative", "json", `{"text":"alt"}`, "", presets["agy"].Answer, "alt", "", false},
		{"text", "text", "  plain answer\n", "", answerRule{}, "plain answer", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parseOutput(tt.format, tt.rule, []byte(tt.out), tt.file)
			if (err != nil) != tt.fail {
				t.Fatalf("err = %v, want failure %v", err, tt.fail)
			}
			if p.Answer != tt.answer || p.WorkerError != tt.workerErr {
				t.Fatalf("answer %q err %q; want %q %q", p.Answer, p.WorkerError, tt.answer, tt.workerErr)
			}
		})
	}
}

func FuzzParseOutput(f *testing.F) {
	f.Add("jsonl", `{"type":"item.completed","item":{"type":"agent_message","text":"x"}}`)
	f.Add("json", `{"result":"x","is_error":false}`)
	f.Add("json", "pre\n{\"response\":1}")
	f.Fuzz(func(t *testing.T, format, out string) {
		if len(out) > 4096 {
			return
		}
		for _, w := range presets {
			p, err := parseOutput(format, w.Answer, []byte(out), "")
			if p == nil || (err == nil && p.Answer == "" && p.WorkerError == "" && format != "text" && format == w.Output) {
				t.Fatalf("%s: no answer and no error for %q", w.Name, out)
			}
		}
	})
}

func TestCapSummary(t *testing.T) {
	long := strings.Repeat("h", 10000) + strings.Repeat("é", 10000) + "THE END"
	got, cut := capSummary(long, SummaryMax)
	if !cut || utf8.RuneCountInString(got) > SummaryMax || !strings.HasPrefix(got, "hhhh") || !strings.HasSuffix(got, "THE END") || !utf8.ValidString(got) {
		t.Fatalf("cut=%v len=%d head=%q tail=%q", cut, utf8.RuneCountInString(got), got[:10], got[len(got)-10:])
	}
	if s, cut := capSummary("short", SummaryMax); cut || s != "short" {
		t.Fatal("short summary changed")
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		bad  bool
	}{
		{"go test ./...", []string{"go", "test", "./..."}, false},
		{`npm test -- "upload spec"`, []string{"npm", "test", "--", "upload spec"}, false},
		{"npm test | tee log", nil, true},
		{"make && make test", nil, true},
		{"a; b", nil, true},
		{"echo > f", nil, true},
		{"echo `id`", nil, true},
		{"echo $(id)", nil, true},
		{"sleep 1 &", nil, true},
		{`echo "unterminated`, nil, true},
		{"   ", nil, true},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.in)
		if (err != nil) != tt.bad || strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
			t.Errorf("splitCommand(%q) = %q, %v", tt.in, got, err)
		}
	}
}

func TestProjectChecks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "package.json", `{"scripts":{"build":"tsc","dev":"vite","start":"node .","test":"vitest","typecheck":"tsc --noEmit"}}`)
	writeFile(t, dir, "go.mod", "module x\n")
	writeFile(t, dir, "Makefile", "build:\n\ttrue\ntest: build\n\ttrue\n")
	var got []string
	for _, c := range projectChecks(dir) {
		got = append(got, strings.Join(c, " "))
	}
	want := "npm run typecheck|npm run test|go vet ./...|go test ./...|make test"
	if strings.Join(got, "|") != want {
		t.Fatalf("checks %q, want %q", got, want)
	}
}

func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{"go test ./...", `npm test -- "a b"`, "a | b", "x && y", `'unterminated`, "echo `id`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return
		}
		argv, err := splitCommand(s)
		if err != nil {
			return
		}
		if len(argv) == 0 {
			t.Fatalf("accepted %q with no argv", s)
		}
		for _, m := range shellMeta {
			if strings.Contains(s, m) {
				t.Fatalf("accepted %q containing %q", s, m)
			}
		}
	})
}

func TestParseIndexFlags(t *testing.T) {
	in := "H src/a.go\x00S hidden.go\x00h assumed.txt\x00s both.txt\x00x\x00\x00"
	got := parseIndexFlags([]byte(in))
	want := map[string]string{"hidden.go": "skip-worktree", "assumed.txt": "assume-unchanged", "both.txt": "skip-worktree"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%v", got)
	}
	if len(parseIndexFlags(nil)) != 0 || len(nulPaths([]byte("\x00\x00"))) != 0 {
		t.Fatal("empty input")
	}
	if got := strings.Join(nulPaths([]byte("a b\x00c\x00")), "|"); got != "a b|c" {
		t.Fatalf("%q", got)
	}
}

func TestProgramOverrides(t *testing.T) {
	in := "core.bare\nfalse\x00filter.lfs.clean\ngit-lfs clean -- %f\x00filter.Evil.Name.process\nx\x00" +
		"filter.lfs.required\ntrue\x00diff.evil.textconv\nsh\x00diff.x.command\ny\x00merge.m.driver\nz\x00" +
		"diff.color\nauto\x00user.name\nfilter.a.clean\x00\x00broken\x00filter.a=b.clean\nevil\x00filter.a=b.required\ntrue"
	got := strings.Join(programOverrides([]byte(in)), " ")
	want := "-c filter.lfs.clean= -c filter.Evil.Name.process= -c filter.lfs.required=false -c diff.evil.textconv= -c diff.x.command= -c merge.m.driver=" +
		" --config-env=filter.a=b.clean=AGENT_TOOLS_GIT_EMPTY --config-env=filter.a=b.required=AGENT_TOOLS_GIT_FALSE"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func FuzzProgramOverrides(f *testing.F) {
	f.Add([]byte("filter.a.clean\nx\x00diff.b.textconv\ny\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := programOverrides(b)
		for i := 0; i < len(out); i++ {
			switch {
			case strings.HasPrefix(out[i], "--config-env=") && strings.Count(out[i], "=") >= 3:
			case out[i] == "-c" && i+1 < len(out) && strings.Contains(out[i+1], "=") && !strings.Contains(strings.TrimSuffix(strings.TrimSuffix(out[i+1], "false"), "="), "="):
				i++
			default:
				t.Fatalf("bad option list %q", out)
			}
		}
	})
}

func FuzzParseIndexFlags(f *testing.F) {
	f.Add([]byte("S a\x00h b\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return
		}
		for p, flag := range parseIndexFlags(b) {
			if p == "" || strings.ContainsRune(p, 0) || (flag != "skip-worktree" && flag != "assume-unchanged") {
				t.Fatalf("bad entry %q %q", p, flag)
			}
		}
		for _, p := range nulPaths(b) {
			if p == "" || strings.ContainsRune(p, 0) {
				t.Fatalf("bad path %q", p)
			}
		}
	})
}

// TestToolsGolden pins what models see: names, descriptions and schemas.
func TestToolsGolden(t *testing.T) {
	p := newProvider(t, "codex", t.TempDir())
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "golden", "tools_codex.json"), string(b)+"\n")
	if strings.Contains(string(b), "<id>") {
		t.Fatal("placeholder left in a schema")
	}
}
