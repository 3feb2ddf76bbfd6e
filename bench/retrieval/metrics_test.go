package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestMetrics(t *testing.T) {
	rs := []queryResult{
		// 2 needs: first found at rank 1, second (either id) at rank 4.
		{Needs: [][]string{{"a"}, {"x", "b"}}, Ranked: []string{"a", "c", "d", "b"}},
		// 1 need, not retrieved at all.
		{Needs: [][]string{{"z"}}, Ranked: []string{"a", "b"}},
		// 3 needs: ranks 2, 6 and missing.
		{Needs: [][]string{{"q"}, {"r"}, {"s"}}, Ranked: []string{"p", "q", "1", "2", "3", "r"}},
	}
	if got, want := recallAt(rs, 1), (0.5+0+0)/3; !near(got, want) {
		t.Errorf("recall@1 = %v, want %v", got, want)
	}
	if got, want := recallAt(rs, 5), (1+0+1.0/3)/3; !near(got, want) {
		t.Errorf("recall@5 = %v, want %v", got, want)
	}
	if got, want := recallAt(rs, 10), (1+0+2.0/3)/3; !near(got, want) {
		t.Errorf("recall@10 = %v, want %v", got, want)
	}
	if got, want := completeAt(rs, 5), 1.0/3; !near(got, want) {
		t.Errorf("complete@5 = %v, want %v", got, want)
	}
	if got, want := mrr(rs), (1+0+0.5)/3; !near(got, want) {
		t.Errorf("MRR = %v, want %v", got, want)
	}
	// MRR counts only the top 50.
	long := make([]string, 60)
	for i := range long {
		long[i] = "n"
	}
	long[55] = "hit"
	if got := mrr([]queryResult{{Needs: [][]string{{"hit"}}, Ranked: long}}); got != 0 {
		t.Errorf("MRR beyond rank 50 = %v, want 0", got)
	}
	// A repeated id keeps its first rank.
	if got := foundAt(queryResult{Needs: [][]string{{"a"}}, Ranked: []string{"b", "a", "a"}}); got[0] != 2 {
		t.Errorf("foundAt = %v", got)
	}
}

func TestRunJSON(t *testing.T) {
	dir := t.TempDir()
	tools := `{"id":"gh::list_repos","server":"gh","server_description":"GitHub","name":"list_repos","description":"List repositories","input_schema":{"properties":{"owner":{"type":"string"}}}}
{"id":"gh::create_issue","server":"gh","server_description":"GitHub","name":"create_issue","description":"Open an issue","input_schema":{}}
{"id":"fs::write_file","server":"fs","server_description":"Files","name":"write_file","description":"Write a file","input_schema":null}
`
	queries := `{"id":"1","query":"list my repositories","needs":[["gh::list_repos"]]}
{"id":"2","query":"open an issue and then save the notes to /tmp/notes.md","needs":[["gh::create_issue"],["fs::write_file"]]}
`
	if err := os.WriteFile(filepath.Join(dir, "tools.jsonl"), []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "queries.jsonl"), []byte(queries), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"--dataset", dir, "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var m map[string]float64
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("last line is not JSON: %q", lines[len(lines)-1])
	}
	for _, k := range []string{"recall_at_1", "recall_at_5", "recall_at_10", "complete_at_5", "mrr", "build_ms", "query_p50_us", "query_p99_us"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %s", k)
		}
	}
	if m["recall_at_5"] != 1 || m["mrr"] != 1 {
		t.Errorf("tiny set should be solved: %v", m)
	}
	// --tools/--queries is equivalent.
	out.Reset()
	if err := run([]string{"--tools", filepath.Join(dir, "tools.jsonl"), "--queries", filepath.Join(dir, "queries.jsonl"), "--k", "1,3"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "recall@3") {
		t.Errorf("--k not honoured:\n%s", out.String())
	}
	// Missing data is an error with usage.
	if err := run(nil, &out); err == nil {
		t.Error("no flags: want an error")
	}
	if err := run([]string{"--set", "nope=1", "--dataset", dir}, &out); err == nil {
		t.Error("unknown --set key: want an error")
	}
}
