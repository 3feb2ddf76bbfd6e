package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// datasetNames are the public data sets the table has rows for.
var datasetNames = []string{"livemcpbench", "azure-mcp"}

// missingDatasets lists the data sets whose tools.jsonl is not under dir.
func missingDatasets(dir string) []string {
	var out []string
	for _, ds := range datasetNames {
		if _, err := os.Stat(filepath.Join(dir, ds, "tools.jsonl")); err != nil {
			out = append(out, filepath.Join(dir, ds))
		}
	}
	return out
}

// reportMissing says, after the table, which rows it lacks and why.
func reportMissing(w io.Writer, missing []string) {
	for _, m := range missing {
		fmt.Fprintf(w, "contextcost: NOT MEASURED: %s (no tools.jsonl there): its rows are missing above. "+
			"The data sets live in ../shared/datasets beside the repository (see the README); pass --datasets DIR.\n", m)
	}
}

// offeredTools counts the tools the providers offer before naming.
func offeredTools(provs []*providertest.Fake) int {
	n := 0
	for _, p := range provs {
		ts, _ := p.Tools(context.Background())
		n += len(ts)
	}
	return n
}
