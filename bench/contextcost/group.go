package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// groupCat is a registry with a progressive.groupAbove of its own.
type groupCat struct {
	*registry.Registry
	above int
}

func (c groupCat) ProgressiveGroupAbove() int { return c.above }

// sweepGroup prints the tokens of progressive mode's tools/list with the
// first n providers of each data set, ungrouped (one discover and one call
// each) and grouped: what progressive.groupAbove's default is decided from.
func sweepGroup(w io.Writer, datasets string, count func([]byte) int) {
	fmt.Fprintln(w, "| data set | providers | ungrouped list tokens | grouped list tokens |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	for _, ds := range []string{"livemcpbench", "azure-mcp"} {
		provs, _, err := loadDataset(filepath.Join(datasets, ds, "tools.jsonl"))
		if err != nil {
			continue
		}
		for _, n := range []int{1, 2, 4, 6, 8, 10, 12, 16} {
			if n > len(provs) {
				break
			}
			fmt.Fprintf(w, "| %s | %d | %d | %d |\n", ds, n, progressiveListTokens(provs[:n], -1, count), progressiveListTokens(provs[:n], 0, count))
		}
	}
	fmt.Fprintln(w, "\n| data set | discover R@5, per provider (provider known) | grouped, same provider | grouped, every provider |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	for _, ds := range []string{"livemcpbench", "azure-mcp"} {
		provs, ids, err := loadDataset(filepath.Join(datasets, ds, "tools.jsonl"))
		if err != nil {
			continue
		}
		qs, err := loadQueries(filepath.Join(datasets, ds, "queries.jsonl"))
		if err != nil {
			fail(err)
		}
		r := measureDiscoverRecall(ds, provs, ids, qs)
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f |\n", ds, r.PerProvider, r.GroupedScoped, r.GroupedAnywhere)
	}
}

func progressiveListTokens(provs []*providertest.Fake, above int, count func([]byte) int) int {
	reg := registry.New(nil)
	for _, p := range provs {
		if err := reg.Add(p); err != nil {
			fail(err)
		}
	}
	reg.Refresh(context.Background())
	if above == 0 { // grouped: a threshold just below the count
		above = max(1, len(provs)-1)
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{}})
	fac := facade.New(groupCat{reg, above}, run, facade.Options{Mode: facade.Progressive})
	fac.Sync()
	b, _ := json.Marshal(map[string]any{"tools": fac.Tools()})
	return count(b)
}

// discoverRecall is R@5 of progressive mode's discover on a data set's
// requests: today's per-provider discover given the needed tool's provider
// (the model picked it from the tool list), the grouped discover given the
// same provider (the same ranking by construction) and the grouped
// discover over every provider (no provider picked).
type discoverRecall struct {
	Catalog         string  `json:"catalog"`
	PerProvider     float64 `json:"per_provider_r5"`
	GroupedScoped   float64 `json:"grouped_scoped_r5"`
	GroupedAnywhere float64 `json:"grouped_all_r5"`
}

func measureDiscoverRecall(name string, provs []*providertest.Fake, ids map[string]string, qs []datasetQuery) discoverRecall {
	reg := registry.New(nil)
	for _, p := range provs {
		if err := reg.Add(p); err != nil {
			fail(err)
		}
	}
	reg.Refresh(context.Background())
	type ref struct{ provider, name, canonical string }
	byID := map[string][]ref{}
	byCanonical := map[string]string{}
	for _, t := range reg.Tools("") {
		id := ids[t.Provider+"\x00"+t.Name]
		byID[id] = append(byID[id], ref{t.Provider, t.Name, t.Canonical})
		byCanonical[t.Canonical] = id
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{}})
	session := func(above int) *sdk.ClientSession {
		fac := facade.New(groupCat{reg, above}, run, facade.Options{Mode: facade.Progressive})
		fac.Sync()
		cs, _ := connect(fac)
		return cs
	}
	perProv, grouped := session(-1), session(1)
	names := func(cs *sdk.ClientSession, tool string, args map[string]any) []string {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			return nil
		}
		var out struct {
			Results []struct{ Name string } `json:"results"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &out); err != nil {
			return nil // not a discover answer: no names
		}
		var ns []string
		for _, r := range out.Results {
			ns = append(ns, r.Name)
		}
		return ns
	}
	r := discoverRecall{Catalog: name}
	for _, q := range qs {
		if len(q.Needs) == 0 {
			continue
		}
		all := map[string]bool{}
		for _, n := range names(grouped, "agent_tools_discover", map[string]any{"query": q.Query, "limit": 5}) {
			all[byCanonical[n]] = true
		}
		var pp, gs, ga float64
		for _, need := range q.Needs {
			foundPP, foundGS, foundGA := false, false, false
			seen := map[string]bool{}
			for _, id := range need {
				foundGA = foundGA || all[id]
				for _, t := range byID[id] {
					if seen[t.provider] {
						continue
					}
					seen[t.provider] = true
					for _, n := range names(perProv, "agent_tools_"+t.provider+"_discover", map[string]any{"query": q.Query, "limit": 5}) {
						for _, id2 := range need {
							for _, t2 := range byID[id2] {
								foundPP = foundPP || (t2.provider == t.provider && t2.name == n)
							}
						}
					}
					for _, n := range names(grouped, "agent_tools_discover", map[string]any{"query": q.Query, "provider": t.provider, "limit": 5}) {
						for _, id2 := range need {
							foundGS = foundGS || byCanonical[n] == id2
						}
					}
				}
			}
			for _, f := range []struct {
				ok  bool
				sum *float64
			}{{foundPP, &pp}, {foundGS, &gs}, {foundGA, &ga}} {
				if f.ok {
					*f.sum++
				}
			}
		}
		n := float64(len(q.Needs))
		r.PerProvider += pp / n
		r.GroupedScoped += gs / n
		r.GroupedAnywhere += ga / n
	}
	n := float64(len(qs))
	r.PerProvider, r.GroupedScoped, r.GroupedAnywhere = r.PerProvider/n, r.GroupedScoped/n, r.GroupedAnywhere/n
	return r
}
