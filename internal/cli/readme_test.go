package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestREADMETour runs the README's five-minute tour as printed: its
// agent-tools.yaml, the commands of "Check it", what the model sees and
// the calls, in a fresh git repository. The two providers that need the
// network are served on this machine instead, and only their network
// parts change: npx's download of server-everything becomes this test
// binary serving the same tool list (upstream_test.go), the petstore's
// URLs a local server with the petstore's document (testdata/tour). The
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
	tourYAML, calls, modelCalls := block("yaml"), block("sh"), block("jsonc")
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
	// The names list prints, as the tour gives them.
	listed := regexp.MustCompile("`agent-tools list`\\s+prints\\s+the\\s+canonical\\s+names\\s+\\(([^)]*)\\)").FindStringSubmatch(tour)
	if listed == nil {
		t.Fatal("the tour no longer says which names `agent-tools list` prints")
	}
	listNames := regexp.MustCompile("`([a-z]+_[A-Za-z_-]+)`").FindAllStringSubmatch(listed[1], -1)
	// What the model sees: the tour's exact tools/list for its config.
	sees := regexp.MustCompile("(?s)For\\s+this\\s+config\\s+`tools/list`\\s+holds\\s+(.*?)[:.]\\s").FindStringSubmatch(tour)
	if sees == nil {
		t.Fatal("the tour no longer says what tools/list holds for its config (\"For this config `tools/list` holds …\")")
	}
	var want []string
	for _, m := range regexp.MustCompile("`(agent_tools_[a-z0-9_]+)`").FindAllStringSubmatch(sees[1], -1) {
		want = append(want, m[1])
	}
	slices.Sort(want)
	// ... and with a threshold of the operator's: a discover and a call for
	// each provider it names.
	pairs := regexp.MustCompile("(?s)With\\s+`progressive:\\s+\\{groupAbove:\\s+(\\d+)\\}`.*?a\\s+discover\\s+and\\s+a\\s+call\\s+for\\s+(.*?),\\s+such\\s+as").FindStringSubmatch(tour)
	if pairs == nil {
		t.Fatal("the tour no longer says what tools/list holds with a groupAbove of one's own (\"With `progressive: {groupAbove: N}` … a discover and a call for …, such as\")")
	}
	wantPairs := []string{"agent_tools_help"}
	for _, m := range regexp.MustCompile("`([a-z0-9]+)`").FindAllStringSubmatch(pairs[2], -1) {
		wantPairs = append(wantPairs, "agent_tools_"+m[1]+"_discover", "agent_tools_"+m[1]+"_call")
	}
	slices.Sort(wantPairs)

	// The network parts, served here.
	pets, err := os.ReadFile(filepath.Join("testdata", "tour", "petstore.json"))
	if err != nil {
		t.Fatal(err)
	}
	var petCalls []string
	var petMu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v3/openapi.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write(pets)
		case "/api/v3/pet/findByStatus":
			petMu.Lock()
			petCalls = append(petCalls, r.URL.RawQuery)
			petMu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `[{"id": 7, "name": "Rex", "photoUrls": [], "status": %q}]`, r.URL.Query().Get("status"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(tourYAML), &doc); err != nil {
		t.Fatalf("the tour's YAML: %v", err)
	}
	top := doc.Content[0]
	var local []string
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "providers" {
			continue
		}
		for _, p := range top.Content[i+1].Content {
			for j := 0; j+1 < len(p.Content); j += 2 {
				k, v := p.Content[j].Value, p.Content[j+1]
				switch {
				case k == "command" && v.Value == "npx":
					// npx downloads @modelcontextprotocol/server-everything.
					v.Value = self
					for jj := 0; jj+1 < len(p.Content); jj += 2 {
						if p.Content[jj].Value == "args" {
							p.Content[jj+1].Content = []*yaml.Node{{Kind: yaml.ScalarNode, Value: upstreamArg}, {Kind: yaml.ScalarNode, Value: "everything"}}
						}
					}
					local = append(local, "npx")
				case k == "spec" && strings.HasPrefix(v.Value, "https://petstore3.swagger.io/"):
					v.Value = srv.URL + "/api/v3/openapi.json"
					local = append(local, "spec")
				case k == "baseURL" && strings.HasPrefix(v.Value, "https://petstore3.swagger.io/"):
					v.Value = srv.URL + "/api/v3"
					local = append(local, "baseURL")
				case k == "spec" || k == "baseURL" || k == "url":
					t.Fatalf("the tour reaches %s, which this test does not serve", v.Value)
				}
			}
		}
	}
	if slices.Sort(local); !slices.Equal(local, []string{"baseURL", "npx", "spec"}) {
		t.Fatalf("expected the tour's network parts (npx, the petstore's spec and baseURL), found %v", local)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the tour's git provider cannot run")
	}
	localYAML, err := yaml.Marshal(&doc)
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
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), localYAML, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runIn := func(stdin, line string) (int, string, string) {
		t.Helper()
		args := shellWords(t, line)
		if len(args) == 0 || args[0] != "agent-tools" {
			t.Fatalf("not an agent-tools command: %q", line)
		}
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Dir: dir, LookupEnv: os.LookupEnv}
		code := Run(ctx, env, args[1:])
		return code, out.String(), errb.String()
	}
	run := func(line string) (int, string, string) { t.Helper(); return runIn("", line) }

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
	code, out, errs = run("agent-tools list")
	if code != ExitOK || !regexp.MustCompile(`(?m)^git_log +git +yes`).MatchString(out) {
		t.Errorf("list: %d\n%s%s", code, out, errs)
	}
	if len(listNames) < 3 {
		t.Errorf("the tour names %d tools list prints: %q", len(listNames), listed[1])
	}
	for _, m := range listNames {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m[1]) + ` `).MatchString(out) {
			t.Errorf("the tour says list prints %s; it does not:\n%s", m[1], out)
		}
	}

	// What the model sees: tools/list as a client gets it, then the
	// discover and the call the tour shows, as written.
	session := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"tour","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}
	var shown, shownArgs []string // the tools the tour calls, in order, and their arguments
	lines := strings.Split(strings.TrimSpace(modelCalls), "\n")
	for i := 0; i < len(lines); i++ {
		name, isCall := strings.CutPrefix(strings.TrimSpace(lines[i]), "// ")
		if !isCall || !strings.HasPrefix(name, "agent_tools_") || i+1 == len(lines) {
			continue
		}
		args := strings.TrimSpace(lines[i+1])
		if !json.Valid([]byte(args)) {
			t.Fatalf("the tour's arguments of %s are not JSON: %s", name, args)
		}
		shown, shownArgs = append(shown, name), append(shownArgs, args)
		session = append(session, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, 2+len(shown), name, args))
	}
	if len(shown) != 2 || !strings.HasSuffix(shown[0], "discover") || !strings.HasSuffix(shown[1], "call") {
		t.Fatalf("the tour's calls changed: %v", shown)
	}
	serve := func(session []string) map[int]json.RawMessage {
		t.Helper()
		code, out, errs := runIn(strings.Join(session, "\n")+"\n", "agent-tools serve --log-level error")
		if code != ExitOK {
			t.Fatalf("serve: %d\n%s", code, errs)
		}
		replies := map[int]json.RawMessage{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var r struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal([]byte(l), &r) != nil || r.Result == nil {
				t.Fatalf("serve's stdout holds a line that is not a result: %s", l)
			}
			replies[r.ID] = r.Result
		}
		return replies
	}
	toolsListed := func(replies map[int]json.RawMessage) []string {
		t.Helper()
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(replies[2], &list); err != nil {
			t.Fatalf("tools/list: %v\n%s", err, replies[2])
		}
		var got []string
		for _, tl := range list.Tools {
			got = append(got, tl.Name)
		}
		slices.Sort(got)
		return got
	}
	replies := serve(session)
	if got := toolsListed(replies); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("tools/list of the tour's config:\n  got  %v\n  README says %v", got, want)
	}
	// The call names the tool discover ranked first.
	var callArgs struct {
		Tool     string `json:"tool"`
		ToolName string `json:"toolName"`
	}
	_ = json.Unmarshal([]byte(shownArgs[1]), &callArgs)
	calledTool := callArgs.Tool + callArgs.ToolName
	for i, name := range shown {
		var res struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(replies[3+i], &res); err != nil || res.IsError || len(res.Content) == 0 {
			t.Errorf("%s: %v %s", name, err, replies[3+i])
			continue
		}
		text := res.Content[0].Text
		switch i {
		case 0:
			var d struct {
				Results []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"results"`
			}
			if json.Unmarshal([]byte(text), &d) != nil || len(d.Results) == 0 || d.Results[0].Name != calledTool || d.Results[0].InputSchema == nil {
				t.Errorf("%s: want %s first, with its input schema: %s", name, calledTool, text)
			}
		case 1:
			if !strings.Contains(text, `"Rex"`) || !slices.Equal(petCalls, []string{"status=available"}) {
				t.Errorf("%s: %s (the petstore saw %v)", name, text, petCalls)
			}
		}
	}

	// With the tour's groupAbove of one's own: a pair per provider with
	// tools (local, empty, has none).
	mustWrite(t, filepath.Join(dir, "agent-tools.yaml"), append(localYAML, []byte("progressive: {groupAbove: "+pairs[1]+"}\n")...), 0o644)
	if got := toolsListed(serve(session[:3])); !slices.Equal(got, wantPairs) {
		t.Errorf("tools/list with progressive.groupAbove %s:\n  got  %v\n  README says %v", pairs[1], got, wantPairs)
	}
	mustWrite(t, filepath.Join(dir, "agent-tools.yaml"), localYAML, 0o644)

	// The calls, as printed: the comment says what each does.
	lines = strings.Split(strings.TrimSpace(calls), "\n")
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
