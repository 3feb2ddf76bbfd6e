package index

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

func TestRealScaled(t *testing.T) {
	dir := "/work/shared/datasets/livemcpbench"
	f, _ := os.Open(dir + "/tools.jsonl")
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
		by[r.Server] = append(by[r.Server], Doc{ID: r.ID, Kind: "tool", Name: r.Name, Description: r.Description, ProviderDescription: r.ServerDescription, Params: ParamsFromSchema(r.Schema)})
	}
	f.Close()
	ix := New()
	t0 := time.Now()
	n := 0
	for c := 0; n < 10000; c++ {
		for _, p := range order {
			docs := slices.Clone(by[p])
			for i := range docs {
				docs[i].ID = fmt.Sprint(c, docs[i].ID)
			}
			ix.Replace(fmt.Sprint(p, c), docs)
			n += len(docs)
		}
	}
	fmt.Println("build", n, time.Since(t0))
	qf, _ := os.Open(dir + "/queries.jsonl")
	qs := bufio.NewScanner(qf)
	var lat []time.Duration
	var queries []string
	for qs.Scan() {
		var q struct{ Query string }
		json.Unmarshal(qs.Bytes(), &q)
		queries = append(queries, q.Query)
	}
	worst := map[string]time.Duration{}
	for r := 0; r < 3; r++ {
		for _, q := range queries {
			t1 := time.Now()
			ix.Search(q, Options{Limit: 10})
			d := time.Since(t1)
			lat = append(lat, d)
			if r > 0 {
				worst[q] = max(worst[q], d)
			}
		}
	}
	for q, d := range worst {
		if d > 5*time.Millisecond {
			if len(q) > 80 {
				q = q[:80]
			}
			fmt.Println(d, len(Tokens(q)), q)
		}
	}
	slices.Sort(lat)
	fmt.Println("p50", lat[len(lat)/2], "p99", lat[len(lat)*99/100])
}
