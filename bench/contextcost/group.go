package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

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
