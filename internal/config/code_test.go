package config_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
)

// TestCodeScriptCaps: code.maxConcurrent and code.maxPerIdentity (#44 item
// 7) take whole numbers from 0 (the default); a per-identity cap above the
// global one is allowed (the global cap binds first).
func TestCodeScriptCaps(t *testing.T) {
	good := []struct {
		name string
		src  string
		want config.Code
	}{
		{"absent: defaults", "code:\n  maxCalls: 3\n", config.Code{MaxCalls: 3}},
		{"zero: defaults", "code:\n  maxConcurrent: 0\n  maxPerIdentity: 0\n", config.Code{}},
		{"both set", "code:\n  maxConcurrent: 12\n  maxPerIdentity: 3\n", config.Code{MaxConcurrent: 12, MaxPerIdentity: 3}},
		{"per identity equals global", "code:\n  maxConcurrent: 2\n  maxPerIdentity: 2\n", config.Code{MaxConcurrent: 2, MaxPerIdentity: 2}},
		{"per identity above global", "code:\n  maxConcurrent: 2\n  maxPerIdentity: 8\n", config.Code{MaxConcurrent: 2, MaxPerIdentity: 8}},
		{"per identity alone", "code:\n  maxPerIdentity: 1\n", config.Code{MaxPerIdentity: 1}},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(t, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if c.Code != tt.want {
				t.Fatalf("code %+v, want %+v", c.Code, tt.want)
			}
		})
	}
	bad := []struct {
		name string
		src  string
		want []string
	}{
		{"negative", "code:\n  maxConcurrent: -1\n  maxPerIdentity: -4\n", []string{
			`agent-tools.yaml:2:18: code.maxConcurrent: must not be negative, got -1`,
			`agent-tools.yaml:3:19: code.maxPerIdentity: must not be negative, got -4`}},
		{"not numbers", "code:\n  maxConcurrent: lots\n  maxPerIdentity: true\n", []string{
			`agent-tools.yaml:2:18: code.maxConcurrent: want an integer, got "lots"`,
			`agent-tools.yaml:3:19: code.maxPerIdentity: want an integer, got boolean true`}},
		{"fractions", "code:\n  maxConcurrent: 2.5\n  maxPerIdentity: 1e1\n", []string{
			`agent-tools.yaml:2:18: code.maxConcurrent: want an integer, got number 2.5`,
			`agent-tools.yaml:3:19: code.maxPerIdentity: want an integer, got number 1e1`}},
		{"a list", "code:\n  maxConcurrent: [4]\n", []string{
			`agent-tools.yaml:2:18: code.maxConcurrent: want an integer, got a list`}},
		{"misspelt", "code:\n  maxConcurent: 4\n", []string{
			`agent-tools.yaml:2:3: code: unknown key "maxConcurent"; did you mean "maxConcurrent"?`}},
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
