package main

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// recallRow is recall at the hits one search call returns, with the
// tokens that call costs (request and response).
type recallRow struct {
	Catalog string  `json:"catalog"`
	Limit   string  `json:"limit"` // "adaptive" or the fixed limit
	Hits    float64 `json:"mean_hits"`
	Tokens  float64 `json:"mean_tokens"`
	Recall  float64 `json:"recall"`
	// EqualTokensRecall (adaptive row): the fixed limits' recall
	// interpolated at this row's mean tokens.
	EqualTokensRecall float64 `json:"fixed_recall_at_equal_tokens,omitempty"`
}

type datasetQuery struct {
	Query string     `json:"query"`
	Needs [][]string `json:"needs"`
}

func loadQueries(path string) ([]datasetQuery, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []datasetQuery
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var q datasetQuery
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// fixedLimits are the limits the adaptive count is compared with.
var fixedLimits = []int{3, 5, 8, 10, 15}

// measureRecall runs every query through agent_tools_search (search mode)
// without a limit (adaptive) and with each fixed limit.
func measureRecall(name string, provs []*providertest.Fake, ids map[string]string, qs []datasetQuery, count func([]byte) int) []recallRow {
	reg := registry.New(nil)
	for _, p := range provs {
		p.Func = func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
			return &provider.Result{Text: `{"ok":true}`}, nil
		}
		if err := reg.Add(p); err != nil {
			fail(err)
		}
	}
	reg.Refresh(context.Background())
	byCanonical := map[string]string{}
	for _, t := range reg.Tools("") {
		byCanonical[t.Canonical] = ids[t.Provider+"\x00"+t.Name]
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{}})
	fac := facade.New(reg, run, facade.Options{Mode: facade.Search})
	fac.Sync()
	cs, closeAll := connect(fac)
	defer closeAll()

	one := func(limit int) recallRow {
		r := recallRow{Catalog: name, Limit: "adaptive"}
		if limit > 0 {
			r.Limit = fmt.Sprint(limit)
		}
		for _, q := range qs {
			args := map[string]any{"query": q.Query}
			if limit > 0 {
				args["limit"] = limit
			}
			tokens, names := searchCall(cs, args, count)
			got := map[string]bool{}
			for _, n := range names {
				got[byCanonical[n]] = true
			}
			found := 0
			for _, need := range q.Needs {
				for _, id := range need {
					if got[id] {
						found++
						break
					}
				}
			}
			if len(q.Needs) > 0 {
				r.Recall += float64(found) / float64(len(q.Needs))
			}
			r.Tokens += float64(tokens)
			r.Hits += float64(len(names))
		}
		n := float64(len(qs))
		r.Recall, r.Tokens, r.Hits = r.Recall/n, r.Tokens/n, r.Hits/n
		return r
	}
	adaptive := one(0)
	var fixed []recallRow
	for _, l := range fixedLimits {
		fixed = append(fixed, one(l))
	}
	adaptive.EqualTokensRecall = interpolate(fixed, adaptive.Tokens)
	return append([]recallRow{adaptive}, fixed...)
}

// searchCall calls agent_tools_search and returns the tokens of request and
// response and the names of the results.
func searchCall(cs *sdk.ClientSession, args map[string]any, count func([]byte) int) (int, []string) {
	params := &sdk.CallToolParams{Name: "agent_tools_search", Arguments: args}
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		fail(err)
	}
	req, _ := json.Marshal(params)
	out, _ := json.Marshal(res)
	var body struct {
		Results []struct {
			Name string `json:"name"`
		} `json:"results"`
	}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			_ = json.Unmarshal([]byte(tc.Text), &body) // a text that is not JSON has no results: recall 0
		}
	}
	names := make([]string, len(body.Results))
	for i, r := range body.Results {
		names[i] = r.Name
	}
	return count(req) + count(out), names
}

// interpolate is the recall of the fixed rows (ascending tokens) at tokens,
// linearly between the two rows around it (clamped at the ends).
func interpolate(rows []recallRow, tokens float64) float64 {
	if len(rows) == 0 {
		return 0
	}
	if tokens <= rows[0].Tokens {
		return rows[0].Recall
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if tokens <= b.Tokens {
			return a.Recall + (b.Recall-a.Recall)*(tokens-a.Tokens)/(b.Tokens-a.Tokens)
		}
	}
	return rows[len(rows)-1].Recall
}

func printRecall(rows []recallRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("recall at the hits agent_tools_search returns (search mode), per call:")
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "catalog\tlimit\tmean hits\tmean tokens\trecall\tfixed limits' recall at equal tokens\t")
	for _, r := range rows {
		eq := ""
		if r.Limit == "adaptive" {
			eq = fmt.Sprintf("%.3f", r.EqualTokensRecall)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.0f\t%.3f\t%s\t\n", r.Catalog, r.Limit, r.Hits, r.Tokens, r.Recall, eq)
	}
	tw.Flush()
}
