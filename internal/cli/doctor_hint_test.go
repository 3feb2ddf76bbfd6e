package cli

import (
	"slices"
	"testing"
)

func TestReadOnlyExamples(t *testing.T) {
	tests := []struct {
		names []string
		want  []string
	}{
		{[]string{"add_observations", "create_entities", "delete_entities", "open_nodes", "read_graph", "search_nodes"}, []string{"open_nodes", "read_graph"}},
		{[]string{"echo", "get-annotated-message", "getTinyImage", "longRunningOperation"}, []string{"get-annotated-message", "getTinyImage"}},
		{[]string{"write_file", "delete", ""}, []string{"<tool>", "…"}},
		{[]string{"ListIssues"}, []string{"ListIssues"}},
		{nil, []string{"<tool>", "…"}},
	}
	for _, tc := range tests {
		if got := readOnlyExamples(tc.names); !slices.Equal(got, tc.want) {
			t.Errorf("readOnlyExamples(%q) = %q, want %q", tc.names, got, tc.want)
		}
	}
}
