package index

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"snake", "list_repos", []string{"list", "repo"}},
		{"camel", "getRepo", []string{"get", "repo", "getrepo"}},
		{"pascal", "CreatePullRequest", []string{"creat", "pull", "request", "createpullrequest"}},
		{"acronym run", "HTTPServer", []string{"http", "server", "httpserver"}},
		{"brand keeps joined form", "MySQL", []string{"sql", "mysql"}},
		{"kebab", "create-issue", []string{"creat", "issu"}},
		{"dots", "repos.list", []string{"repo", "list"}},
		{"digits v2", "getV2", []string{"get", "2", "getv2"}},
		{"digits inside long identifier", "getV2Repo", []string{"get", "2", "repo"}},
		{"short mixed word kept whole", "s3 mp3", []string{"3", "s3", "mp", "3", "mp3"}},
		{"stopwords and stemming", "Please show me all the running servers", []string{"show", "run", "server"}},
		{"irregular verb", "files written", []string{"file", "write"}},
		{"single letters dropped", "a b c d", nil},
		{"punctuation only", "!!! ... ---", nil},
		{"empty", "", nil},
		{"unicode lower", "Ünïcödé Straße", []string{"ünïcödé", "straße"}},
		{"cjk bigrams", "中文搜索", []string{"中文", "文搜", "搜索"}},
		{"cjk single", "八字 MCP", []string{"八字", "mcp"}},
		{"path", "/root/markdown/report.md", []string{"root", "markdown", "report", "md"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Tokens(tc.in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTokensQueryAndDocAgree(t *testing.T) {
	// A tool name and a natural-language request for it share terms.
	name := Tokens("list_repositories")
	query := Tokens("List my repositories")
	for _, w := range name {
		if !slices.Contains(query, w) {
			t.Errorf("term %q of the name is not produced by the query (%q vs %q)", w, name, query)
		}
	}
}

func TestSplitClauses(t *testing.T) {
	got := splitClauses("Read the sales data in /root/a.xlsx, plot it as a bar chart and save it to /root/b.png. Then email the chart.")
	want := []string{"Read the sales data in /root/a.xlsx", "plot it as a bar chart", "save it to /root/b.png", "email the chart"}
	if !slices.Equal(got, want) {
		t.Errorf("splitClauses = %q, want %q", got, want)
	}
	if got := splitClauses("version 2.5 of report.md"); len(got) != 1 {
		t.Errorf("dots inside words must not split: %q", got)
	}
}

func TestLooksLikePath(t *testing.T) {
	for in, want := range map[string]bool{
		"/root/markdown/x.md": true, "~/notes/a": true, "report.pdf": true, "main.go": true,
		"2.5": false, "e.g": true, "hello": false, "/": false, "a..": false, "x.": false,
	} {
		if got := looksLikePath(in); got != want {
			t.Errorf("looksLikePath(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestSegmentWord(t *testing.T) {
	vocab := map[string]bool{"azure": true, "terraform": true, "best": true, "practices": true, "bes": true}
	if got := segmentWord("azureterraformbestpractices", vocab); !slices.Equal(got, []string{"azure", "terraform", "best", "practices"}) {
		t.Errorf("segmentWord = %q", got)
	}
	if got := segmentWord("azurex", vocab); got != nil {
		t.Errorf("unsegmentable word gave %q", got)
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"list_repos", "getV2RepoHTTP", "中文搜索 mixed", "", "\xff\xfe", "a-b.c_d", strings.Repeat("x", 300), "İstanbul ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokens(s)
		for _, tok := range toks {
			if tok == "" {
				t.Fatalf("empty token from %q", s)
			}
			if !utf8.ValidString(tok) {
				t.Fatalf("invalid UTF-8 token %q from %q", tok, s)
			}
		}
		// Deterministic.
		if again := Tokens(s); !slices.Equal(toks, again) {
			t.Fatalf("Tokens not deterministic on %q", s)
		}
		_ = splitClauses(s)
	})
}
