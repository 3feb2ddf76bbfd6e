package index

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The golden rankings pin the ranking of the configuration frozen below
// (goldenConfig: the default configuration when the query path was rewritten
// for speed) on both retrieval data sets and on synthetic queries: every
// performance change must leave each query's top 50 identical. Regenerate
// (only when a ranking change is intended) with
//
//	go test ./internal/index -run TestGoldenRankings -update-golden

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden_rankings.json")

const goldenFile = "testdata/golden_rankings.json"

// goldenConfig is DefaultConfig as it was when the golden file was made.
// New techniques must be off here, so that it keeps ranking the same.
func goldenConfig() Config {
	return Config{
		K1:          1.2,
		FieldWeight: [NumFields]float64{FieldName: 3, FieldDescription: 1, FieldParams: 0.4, FieldEnum: 0.3, FieldProvider: 0.6},
		FieldB:      [NumFields]float64{FieldName: 0.5, FieldDescription: 0.75, FieldParams: 0.75, FieldEnum: 0.75, FieldProvider: 0.75},

		FieldIDF:      true,
		QueryTFLog:    true,
		Stem:          true,
		ExactWeight:   0.5,
		SplitIdent:    true,
		AbbrevWeight:  0.9,
		SynonymWeight: 0.4,

		DecompoundWeight: 0.7,
		ArtifactWeight:   1,
		NameCoverage:     0.3,

		ProviderWeight: 0.5,
		ProviderFields: [NumFields]float64{FieldName: 1, FieldDescription: 1, FieldParams: 0.2, FieldEnum: 0, FieldProvider: 3},

		Clauses:         true,
		ClauseMinTokens: 8,
		ClauseWeight:    1,
		RRFK:            5,
	}
}

// datasetDir finds shared/datasets/<name> (beside the repository), or "".
func datasetDir(name string) string {
	for _, root := range []string{os.Getenv("AGENT_TOOLS_DATASETS"), "../../../shared/datasets", "../../shared/datasets"} {
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

func rankingHash(hs []Hit) string {
	h := fnv.New64a()
	for _, x := range hs {
		h.Write([]byte(x.ID))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

func TestGoldenRankings(t *testing.T) {
	if testing.Short() {
		t.Skip("golden rankings skipped in -short mode")
	}
	var golden map[string]map[string]string
	if !*updateGolden {
		b, err := os.ReadFile(goldenFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &golden); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]map[string]string{}
	for name, suite := range goldenSuites(t, goldenConfig()) {
		ix, cases := suite()
		got := map[string]string{}
		for _, c := range cases {
			got[c.key] = rankingHash(ix.Search(c.query, c.opts))
		}
		out[name] = got
		if *updateGolden {
			continue
		}
		want, ok := golden[name]
		if !ok {
			t.Errorf("suite %s: not in %s", name, goldenFile)
			continue
		}
		bad := 0
		for _, c := range cases {
			if got[c.key] != want[c.key] {
				if bad++; bad <= 5 {
					t.Errorf("suite %s: ranking of %q changed", name, c.query)
				}
			}
		}
		if bad > 0 {
			t.Errorf("suite %s: %d of %d rankings changed", name, bad, len(cases))
		} else {
			t.Logf("suite %s: %d rankings identical", name, len(cases))
		}
	}
	if *updateGolden {
		b, _ := json.MarshalIndent(out, "", " ")
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
