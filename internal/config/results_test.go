package config_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
)

// TestSecurityResults: security.results (issue 48, the result guard) takes
// scan: off | warn | redact | block (unset: warn) and spotlight: a boolean
// (unset: false); anything else is an error at its position.
func TestSecurityResults(t *testing.T) {
	good := []struct {
		name string
		src  string
		want config.Results
		mode string
	}{
		{"absent: defaults", "mode: flat\n", config.Results{}, "warn"},
		{"empty section", "security:\n  results: {}\n", config.Results{}, "warn"},
		{"null section", "security:\n  results:\n", config.Results{}, "warn"},
		{"off", "security:\n  results:\n    scan: off\n", config.Results{Scan: "off"}, "off"},
		{"warn", "security:\n  results:\n    scan: warn\n", config.Results{Scan: "warn"}, "warn"},
		{"redact", "security:\n  results:\n    scan: redact\n", config.Results{Scan: "redact"}, "redact"},
		{"block and spotlight", "security:\n  results:\n    scan: block\n    spotlight: true\n", config.Results{Scan: "block", Spotlight: true}, "block"},
		{"spotlight alone", "security:\n  results: {spotlight: true}\n", config.Results{Spotlight: true}, "warn"},
		{"spotlight false", "security:\n  results: {spotlight: false}\n", config.Results{}, "warn"},
		{"beside the definition scan", "security:\n  scan: off\n  results: {scan: redact}\n", config.Results{Scan: "redact"}, "redact"},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(t, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if c.Security.Results != tt.want {
				t.Fatalf("results %+v, want %+v", c.Security.Results, tt.want)
			}
			if got := c.Security.Results.ScanMode(); got != tt.mode {
				t.Fatalf("ScanMode %q, want %q", got, tt.mode)
			}
		})
	}
	bad := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown mode", "security:\n  results:\n    scan: quarantine\n", []string{
			`agent-tools.yaml:3:11: security.results.scan: unknown result scan mode "quarantine" (want off, warn, redact or block)`}},
		{"upper case", "security:\n  results:\n    scan: Block\n", []string{
			`agent-tools.yaml:3:11: security.results.scan: unknown result scan mode "Block" (want off, warn, redact or block)`}},
		{"scan a list", "security:\n  results:\n    scan: [warn]\n", []string{
			`agent-tools.yaml:3:11: security.results.scan: want a string, got a list`}},
		{"spotlight not a boolean", "security:\n  results:\n    spotlight: sometimes\n", []string{
			`agent-tools.yaml:3:16: security.results.spotlight: want true or false, got "sometimes"`}},
		{"spotlight a number", "security:\n  results:\n    spotlight: 1\n", []string{
			`agent-tools.yaml:3:16: security.results.spotlight: want true or false, got number 1`}},
		{"results a string", "security:\n  results: warn\n", []string{
			`agent-tools.yaml:2:12: security.results: want a mapping, got a string`}},
		{"misspelt key", "security:\n  results:\n    spotlite: true\n", []string{
			`agent-tools.yaml:3:5: security.results: unknown key "spotlite" (want scan or spotlight)`}},
		{"misspelt section", "security:\n  result: {scan: warn}\n", []string{
			`agent-tools.yaml:2:3: security: unknown key "result"; did you mean "results"?`}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(t, tt.src)
			if err == nil {
				t.Fatalf("no error; config %+v", c)
			}
			if got := errorsOf(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
