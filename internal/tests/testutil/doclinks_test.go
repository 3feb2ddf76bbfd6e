package testutil

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README and the pages under docs/ link to each other and to files of
// the repository; a page moved or renamed must not leave a dead link. Every
// relative link of README.md, CONTRIBUTING.md and docs/**/*.md must name an
// existing file, and a "#fragment" into a Markdown file must name one of its
// headings (as GitHub makes anchors from them).
func TestDocLinksResolve(t *testing.T) {
	root := moduleRoot(t)
	pages := []string{filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	checked := 0
	for _, page := range pages {
		for _, l := range markdownLinks(t, page) {
			target, frag, _ := strings.Cut(l.target, "#")
			file := page
			if target != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(target))
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s:%d: link %q: %v", rel(root, page), l.line, l.target, err)
					continue
				}
			}
			checked++
			if frag == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			if anchors[file] == nil {
				anchors[file] = headingAnchors(t, file)
			}
			if !anchors[file][frag] {
				t.Errorf("%s:%d: link %q: no heading with anchor #%s in %s", rel(root, page), l.line, l.target, frag, rel(root, file))
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d relative links found in %d pages: is the link pattern still right?", checked, len(pages))
	}
}

func TestAnchor(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Code mode", "code-mode"},
		{"Traces (OpenTelemetry)", "traces-opentelemetry"},
		{"What is guaranteed, and what is not", "what-is-guaranteed-and-what-is-not"},
		{"Repository scripts: `local`", "repository-scripts-local"},
		{"HTTP: transport, auth and security", "http-transport-auth-and-security"},
		{"Per-identity rules", "per-identity-rules"},
		{"The console (`/ui`)", "the-console-ui"},
	} {
		if got := anchor(c.heading); got != c.want {
			t.Errorf("anchor(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestMarkdownLinks(t *testing.T) {
	page := filepath.Join(t.TempDir(), "p.md")
	text := "See [a](a.md) and [b](b/c.md#x), ![img](i.png), [web](https://example.com), [top](#t).\n" +
		"```\n[not a link](inside-code.md)\n```\n" +
		"`[not either](inline-code.md)` but [after](after.md)\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range markdownLinks(t, page) {
		got = append(got, l.target)
	}
	want := []string{"a.md", "b/c.md#x", "i.png", "#t", "after.md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("links = %q, want %q", got, want)
	}
}

type mdLink struct {
	target string
	line   int
}

var (
	linkRE       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCodeRE = regexp.MustCompile("`[^`]*`")
)

// markdownLinks returns the relative link targets of a Markdown file, outside
// code blocks and inline code.
func markdownLinks(t *testing.T, page string) []mdLink {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mdLink
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(inlineCodeRE.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, mdLink{target: target, line: n})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// headingAnchors returns the anchors of a Markdown file's headings.
func headingAnchors(t *testing.T, page string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fenced := false
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		out[anchor(strings.TrimLeft(line, "# "))] = true
	}
	return out
}

// anchor is GitHub's anchor for a heading: lower case, spaces become
// hyphens, and every character but letters, digits, hyphens and
// underscores is dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no module root with a README.md above the test's directory")
		}
		dir = parent
	}
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}
