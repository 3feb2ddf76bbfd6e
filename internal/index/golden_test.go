package index

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The golden rankings pin the ranking of the shipped configuration
// (DefaultConfig) on both retrieval data sets and on synthetic queries, as
// readable files under testdata/rankings/ (one block per query, one hit per
// line), so that a change shows which query moved and how. Every
// performance change must leave them identical; a ranking change that is
// intended is reviewed as a diff of those files. Regenerate with
//
//	go test ./internal/index -run TestGoldenRankings -update

var update = flag.Bool("update", false, "rewrite the golden rankings under testdata/rankings/")

// goldenDepth is how many hits of each query the golden files keep.
const goldenDepth = 20

// datasetDir finds shared/datasets/<name> (beside the repository), or "".
func datasetDir(name string) string {
	for _, root := range []string{os.Getenv("AGENT_TOOLS_DATASETS"), "../../../shared/datasets", "../../../../shared/datasets", "../../shared/datasets"} {
		if root == "" {
			continue
		}
		d := filepath.Join(root, name)
		if _, err := os.Stat(filepath.Join(d, "tools.jsonl")); err == nil {
			return d
		}
	}
	return ""
}

type dsQuery struct {
	ID    string     `json:"id"`
	Query string     `json:"query"`
	Needs [][]string `json:"needs"`
}

// loadDataset reads a retrieval data set (shared/datasets/README.md) into
// providers (first-seen order), their docs, and the queries.
func loadDataset(t testing.TB, dir string) ([]string, map[string][]Doc, []dsQuery) {
	t.Helper()
	var order []string
	by := map[string][]Doc{}
	eachLine(t, filepath.Join(dir, "tools.jsonl"), func(b []byte) {
		var r struct {
			ID, Server, Name, Description string
			ServerDescription             string          `json:"server_description"`
			InputSchema                   json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if _, ok := by[r.Server]; !ok {
			order = append(order, r.Server)
		}
		by[r.Server] = append(by[r.Server], Doc{ID: r.ID, Kind: "tool", Provider: r.Server, ProviderDescription: r.ServerDescription,
			Name: r.Name, Description: r.Description, Params: ParamsFromSchema(r.InputSchema)})
	})
	var qs []dsQuery
	eachLine(t, filepath.Join(dir, "queries.jsonl"), func(b []byte) {
		var q dsQuery
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	})
	return order, by, qs
}

func eachLine(t testing.TB, path string, f func([]byte)) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) > 0 {
			f(sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// goldenCase is one ranked query: a name and how to run it.
type goldenCase struct {
	key   string
	query string
	opts  Options
}

// goldenSuites returns, per suite, an index builder and its cases.
func goldenSuites(t testing.TB, cfg Config) map[string]func() (*Index, []goldenCase) {
	build := func(order []string, by map[string][]Doc) *Index {
		ix := NewWithConfig(cfg)
		for _, p := range order {
			ix.Replace(p, by[p])
		}
		return ix
	}
	suites := map[string]func() (*Index, []goldenCase){
		"synthetic": func() (*Index, []goldenCase) {
			order, by := synthCatalog(3000)
			var cs []goldenCase
			for i, q := range synthQueries(240) {
				o := Options{Limit: 50}
				switch i % 8 {
				case 5:
					o.Provider = order[i%len(order)]
				case 6:
					o.Kind = "tool"
				case 7:
					o.Limit = 7
				}
				cs = append(cs, goldenCase{fmt.Sprintf("s%d", i), q, o})
			}
			return build(order, by), cs
		},
	}
	for _, name := range []string{"livemcpbench", "azure-mcp"} {
		dir := datasetDir(name)
		if dir == "" {
			continue
		}
		suites[name] = func() (*Index, []goldenCase) {
			order, by, qs := loadDataset(t, dir)
			var cs []goldenCase
			for _, q := range qs {
				cs = append(cs, goldenCase{q.ID, q.Query, Options{Limit: 50}})
			}
			return build(order, by), cs
		}
	}
	return suites
}

// rankingKey is a ranking as one comparable string.
func rankingKey(hs []Hit) string {
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.ID
	}
	return strings.Join(ids, "\n")
}

// goldenText renders a suite's rankings: a block per query, one hit a line.
func goldenText(suite string, cases []goldenCase, got map[string][]Hit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: top %d hits of every query under DefaultConfig.\n", suite, goldenDepth)
	b.WriteString("# Regenerate: go test ./internal/index -run TestGoldenRankings -update\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "\n## %s%s\n%s\n", c.key, optsLabel(c.opts), oneLine(c.query))
		for i, h := range got[c.key] {
			if i == goldenDepth {
				break
			}
			fmt.Fprintf(&b, "%2d %s\n", i+1, h.ID)
		}
	}
	return b.String()
}

func optsLabel(o Options) string {
	var parts []string
	if o.Provider != "" {
		parts = append(parts, "provider="+o.Provider)
	}
	if o.Kind != "" {
		parts = append(parts, "kind="+o.Kind)
	}
	if o.Limit != 50 {
		parts = append(parts, fmt.Sprintf("limit=%d", o.Limit))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, " ") + ")"
}

// oneLine keeps a query on one line of the golden file.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// goldenBlocks splits a golden file into its query blocks by key.
func goldenBlocks(text string) map[string]string {
	out := map[string]string{}
	for _, blk := range strings.Split(text, "\n## ")[1:] {
		key, _, _ := strings.Cut(blk, "\n")
		key, _, _ = strings.Cut(key, " (")
		out[key] = strings.TrimRight(blk, "\n")
	}
	return out
}

// blockDiff shows the lines of two query blocks side by side where they
// differ.
func blockDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "\n    - %s\n    + %s", wl, gl)
		}
	}
	return b.String()
}

func TestGoldenRankings(t *testing.T) {
	if testing.Short() {
		t.Skip("golden rankings skipped in -short mode")
	}
	suites := goldenSuites(t, DefaultConfig())
	for _, name := range []string{"synthetic", "livemcpbench", "azure-mcp"} {
		t.Run(name, func(t *testing.T) {
			suite, ok := suites[name]
			if !ok {
				t.Skip("data set not found (set AGENT_TOOLS_DATASETS to the shared/datasets directory)")
			}
			ix, cases := suite()
			got := map[string][]Hit{}
			for _, c := range cases {
				got[c.key] = ix.Search(c.query, c.opts)
			}
			text := goldenText(name, cases, got)
			file := filepath.Join("testdata", "rankings", name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (create it with -update)", err)
			}
			want, have := goldenBlocks(string(b)), goldenBlocks(text)
			bad := 0
			for _, c := range cases {
				w, ok := want[c.key]
				switch {
				case !ok:
					bad++
					t.Errorf("%s: query %s is not in the golden file (run with -update)", file, c.key)
				case w != have[c.key]:
					if bad++; bad <= 5 {
						t.Errorf("%s: ranking of %s changed:%s", file, c.key, blockDiff(w, have[c.key]))
					}
				}
			}
			if len(want) != len(cases) {
				t.Errorf("%s has %d queries, the suite %d", file, len(want), len(cases))
			}
			if bad > 0 {
				t.Errorf("%s: %d of %d rankings changed (intended? regenerate with -update and review the diff)", file, bad, len(cases))
			}
		})
	}
}
