package index

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func loadDS(t *testing.T, dir string, cfg Config) *Index {
	f, _ := os.Open(dir + "/tools.jsonl")
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	by := map[string][]Doc{}
	var order []string
	for sc.Scan() {
		var r struct {
			ID, Server, Name, Description string
			ServerDescription             string          `json:"server_description"`
			Schema                        json.RawMessage `json:"input_schema"`
		}
		json.Unmarshal(sc.Bytes(), &r)
		if _, ok := by[r.Server]; !ok {
			order = append(order, r.Server)
		}
		by[r.Server] = append(by[r.Server], Doc{ID: r.ID, Kind: "tool", Provider: r.Server, ProviderDescription: r.ServerDescription, Name: r.Name, Description: r.Description, Params: ParamsFromSchema(r.Schema)})
	}
	ix := NewWithConfig(cfg)
	for _, p := range order {
		ix.Replace(p, by[p])
	}
	return ix
}

func TestDebugQuery(t *testing.T) {
	q := os.Getenv("Q")
	if q == "" {
		t.Skip()
	}
	ix := loadDS(t, os.Getenv("DS"), DefaultConfig())
	fmt.Println(Tokens(q))
	fmt.Println(splitClauses(q))
	for i, h := range ix.Search(q, Options{Limit: 30}) {
		fmt.Printf("%2d %.4f %s\n", i+1, h.Score, h.ID)
	}
}
