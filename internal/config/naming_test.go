package config_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/naming"
)

func TestNamingSettings(t *testing.T) {
	const ev = "providers:\n  - id: ev\n    kind: mcp\n    command: node\n"
	tests := []struct {
		name, yaml string
		scheme     naming.Scheme
		maxLen     int
		renames    map[string]map[string]string
		errs       []string
	}{
		{name: "defaults", yaml: "", scheme: naming.Readable, maxLen: 64, renames: map[string]map[string]string{}},
		{name: "lossless", yaml: "naming: lossless\n", scheme: naming.Lossless, maxLen: 64, renames: map[string]map[string]string{}},
		{name: "flat limit", yaml: "flat: {maxNameLength: 128}\n", scheme: naming.Readable, maxLen: 128, renames: map[string]map[string]string{}},
		{name: "rename", yaml: ev + "    rename: {\"Long_Server__get-thing\": get_thing}\n", scheme: naming.Readable, maxLen: 64,
			renames: map[string]map[string]string{"ev": {"Long_Server__get-thing": "get_thing"}}},
		{name: "local rename", yaml: "local:\n  rename: {deploy-to-production: deploy_prod}\n", scheme: naming.Readable, maxLen: 64,
			renames: map[string]map[string]string{"local": {"deploy-to-production": "deploy_prod"}}},
		{name: "local rename while disabled", yaml: "local:\n  enabled: false\n  rename: {a: b}\n", scheme: naming.Readable, maxLen: 64,
			renames: map[string]map[string]string{}},
		{name: "local rename to itself", yaml: "local:\n  rename: {a: a}\n", errs: []string{
			`agent-tools.yaml:2:11: local.rename.a: rename of "a": the new name is the same`}},
		{name: "local rename not a map", yaml: "local:\n  rename: x\n", errs: []string{
			`agent-tools.yaml:2:11: local.rename: want a mapping, got a string`}},
		{name: "unknown scheme", yaml: "naming: pretty\n", errs: []string{
			`agent-tools.yaml:1:9: naming: unknown naming scheme "pretty" (want readable or lossless)`}},
		{name: "empty scheme", yaml: "naming: \"\"\n", errs: []string{
			`agent-tools.yaml:1:9: naming: unknown naming scheme "" (want readable or lossless)`}},
		{name: "scheme not a string", yaml: "naming: [readable]\n", errs: []string{
			`agent-tools.yaml:1:9: naming: want a string, got a list`}},
		{name: "flat limit zero", yaml: "flat: {maxNameLength: 0}\n", errs: []string{
			`agent-tools.yaml:1:23: flat.maxNameLength: maxNameLength 0 is out of range (1 to 1024; most clients accept at most 64)`}},
		{name: "flat limit huge", yaml: "flat: {maxNameLength: 5000}\n", errs: []string{
			`agent-tools.yaml:1:23: flat.maxNameLength: maxNameLength 5000 is out of range (1 to 1024; most clients accept at most 64)`}},
		{name: "flat limit text", yaml: "flat: {maxNameLength: long}\n", errs: []string{
			`agent-tools.yaml:1:23: flat.maxNameLength: want an integer, got "long"`}},
		{name: "flat unknown key", yaml: "flat: {maxLength: 10}\n", errs: []string{
			`agent-tools.yaml:1:8: flat: unknown key "maxLength" (want maxNameLength)`}},
		{name: "rename not a map", yaml: ev + "    rename: [a, b]\n", errs: []string{
			`agent-tools.yaml:5:13: providers[0].rename: want a mapping, got a list`}},
		{name: "rename to empty", yaml: ev + "    rename: {a: \"\"}\n", errs: []string{
			`agent-tools.yaml:5:13: providers[0].rename.a: rename of "a": the new name is empty`}},
		{name: "rename to itself", yaml: ev + "    rename: {a: a}\n", errs: []string{
			`agent-tools.yaml:5:13: providers[0].rename.a: rename of "a": the new name is the same`}},
		{name: "rename two to one", yaml: ev + "    rename: {a: x, b: x}\n", errs: []string{
			`agent-tools.yaml:5:13: providers[0].rename.b: rename: "a" and "b" would both be named "x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse(config.FileName, []byte(tt.yaml), lookup)
			if tt.errs != nil {
				e, ok := config.AsErrors(err)
				if !ok {
					t.Fatalf("want errors %q, got %v", tt.errs, err)
				}
				var got []string
				for _, x := range e.List {
					got = append(got, x.Error())
				}
				if strings.Join(got, "\n") != strings.Join(tt.errs, "\n") {
					t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.errs, "\n"))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Scheme() != tt.scheme || c.FlatMaxNameLength() != tt.maxLen || !reflect.DeepEqual(c.Renames(), tt.renames) {
				t.Fatalf("scheme %q, maxLen %d, renames %v", c.Scheme(), c.FlatMaxNameLength(), c.Renames())
			}
		})
	}
}

func FuzzNamingSettings(f *testing.F) {
	for _, s := range []string{"naming: lossless\n", "flat: {maxNameLength: 9}\n", "naming: 3\nflat: 1\n",
		"providers:\n  - {id: ev, kind: mcp, command: x, rename: {a: b, c: \"\"}}\n", "local: {rename: {a: b, c: b}}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 512 {
			t.Skip("bounded inputs")
		}
		c, err := config.Parse("f.yaml", data, lookup)
		if err != nil {
			return
		}
		if _, err := naming.ParseScheme(c.Naming); err != nil {
			t.Fatalf("accepted scheme %q", c.Naming)
		}
		if n := c.FlatMaxNameLength(); n < 1 || n > config.MaxFlatNameLength {
			t.Fatalf("accepted maxNameLength %d", n)
		}
	})
}
