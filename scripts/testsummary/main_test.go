package main

import (
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"p"}`,
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: no redis-server on PATH\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestA","Elapsed":0}`,
		`{"Action":"run","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: got 1, want 2\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB","Elapsed":0.1}`,
		`{"Action":"run","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"quiet on success\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestC","Elapsed":0.1}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t1.5s\n"}`,
		`{"Action":"fail","Package":"p","Elapsed":1.5}`,
		`# q`,
		`not json at all`,
	}, "\n")
	var out strings.Builder
	failed, err := summarize(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("failed=%v err=%v", failed, err)
	}
	got := out.String()
	for _, want := range []string{
		"b_test.go:3: got 1, want 2",
		"FAIL\tp\t1.5s",
		"== skipped tests: 1",
		"SKIP p TestA: a_test.go:9: no redis-server on PATH",
		"1.5s p",
		"not json at all",
		"\n1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet on success") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

func TestSummarizePasses(t *testing.T) {
	var out strings.Builder
	failed, err := summarize(strings.NewReader(`{"Action":"pass","Package":"p","Elapsed":2}`+"\n"), &out)
	if err != nil || failed || !strings.Contains(out.String(), "skipped tests: none") {
		t.Fatalf("failed=%v err=%v out=%s", failed, err, out.String())
	}
}

func TestSummarizeParts(t *testing.T) {
	in := `{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: needs redis\n"}
{"Action":"skip","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Output":"ok  \tp\t1.0s\n"}
{"Action":"pass","Package":"p","Elapsed":1}
`
	var live, report strings.Builder
	if _, err := summarizeParts(strings.NewReader(in), &live, parts{live: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := summarizeParts(strings.NewReader(in), &report, parts{report: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(live.String(), "ok  \tp") || strings.Contains(live.String(), "SKIP") {
		t.Errorf("live:\n%s", live.String())
	}
	if strings.Contains(report.String(), "ok  \tp") || !strings.Contains(report.String(), "SKIP p TestA: a_test.go:9: needs redis") {
		t.Errorf("report:\n%s", report.String())
	}
}
