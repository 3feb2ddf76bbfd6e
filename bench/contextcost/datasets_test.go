package main

import (
	"strings"
	"testing"
)

// Regression: without ../shared the data-set rows vanished
// from the table with only a line among the others on stderr.
func TestMissingDatasetsAreReported(t *testing.T) {
	missing := missingDatasets(t.TempDir())
	if len(missing) != 2 {
		t.Fatalf("missing = %q, want both data sets", missing)
	}
	var b strings.Builder
	reportMissing(&b, missing)
	for _, want := range []string{"NOT MEASURED", "livemcpbench", "azure-mcp", "../shared/datasets", "--datasets"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
