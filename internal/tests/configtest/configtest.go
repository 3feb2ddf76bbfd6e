// Package configtest holds what the config's tests and the provider kinds'
// config tests share: a fixed environment and parsing helpers.
package configtest

import (
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	_ "github.com/agent-tools/agent-tools/internal/provider/kinds" // the kinds a config may name
)

// Env is the environment every config test sees.
var Env = map[string]string{
	"EV_KEY":            "ev-secret-value",
	"REMOTE_TOKEN":      "remote-secret-value",
	"AGENT_TOOLS_TOKEN": "http-secret-value",
	"TASKS_API_KEY":     "tasks-secret-value",
	"EMPTY":             "",
	"T":                 "45s",
	"FLAG":              "false",
	"NUM":               "7",
	"BADDUR":            "soon-secret",
	"BADKIND":           "kind-secret",
}

// Lookup looks a variable up in Env.
func Lookup(k string) (string, bool) {
	v, ok := Env[k]
	return v, ok
}

// Parse parses src as agent-tools.yaml with Env.
func Parse(t testing.TB, src string) (*config.Config, error) {
	t.Helper()
	return config.Parse("agent-tools.yaml", []byte(src), Lookup)
}

// ErrorsOf returns the lines of err, failing unless it is a *config.Errors
// whose every entry has a position in agent-tools.yaml.
func ErrorsOf(t testing.TB, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	e, ok := config.AsErrors(err)
	if !ok {
		t.Fatalf("error %T is not *Errors: %v", err, err)
	}
	for _, x := range e.List {
		if x.Line <= 0 || x.File != "agent-tools.yaml" {
			t.Errorf("error without position: %#v", x)
		}
	}
	return strings.Split(err.Error(), "\n")
}
