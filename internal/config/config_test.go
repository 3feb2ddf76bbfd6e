package config_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider/cli"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/provider/openapi"
	"github.com/agent-tools/agent-tools/internal/tests/configtest"
)

var (
	testEnv  = configtest.Env
	lookup   = configtest.Lookup
	parse    = configtest.Parse
	errorsOf = configtest.ErrorsOf
)

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"malformed yaml", "mode: [\n", []string{
			"agent-tools.yaml:1: invalid YAML: did not find expected node content"}},
		{"malformed yaml later line", "mode: flat\nlocal:\n  dir: x\n bad\n", []string{
			"agent-tools.yaml:3: invalid YAML: did not find expected key"}},
		{"invalid utf8", "mode: fl\xffat\n", []string{
			"agent-tools.yaml:1:9: invalid YAML: invalid leading UTF-8 octet"}},
		{"unknown anchor", "mode: flat\nlocal: *nope\n", []string{
			"agent-tools.yaml:2:8: invalid YAML: unknown anchor 'nope' referenced"}},
		{"two documents", "mode: flat\n---\nmode: text\n", []string{
			"agent-tools.yaml:3:1: a second YAML document (---) is not allowed; put everything in one"}},
		{"top level list", "- mode\n", []string{
			"agent-tools.yaml:1:1: the top level must be a mapping of settings (mode, naming, flat, local, providers, prompts, policy, server, audit, limits, index, progressive, code, profiles, security, secrets, registry, quotas, cache), got a list"}},
		{"top level scalar", "hello\n", []string{
			"agent-tools.yaml:1:1: the top level must be a mapping of settings (mode, naming, flat, local, providers, prompts, policy, server, audit, limits, index, progressive, code, profiles, security, secrets, registry, quotas, cache), got a string"}},
		{"bad mode", "mode: flatt\n", []string{
			`agent-tools.yaml:1:7: mode: unknown mode "flatt" (want progressive, search, flat, text or code)`}},
		{"code block malformed", "code:\n  allowMutations: yes please\n  maxCalls: -2\n  concurrency: lots\n  timeout: 5\n  budget: 3\n", []string{
			`agent-tools.yaml:2:19: code.allowMutations: want true or false, got "yes please"`,
			`agent-tools.yaml:3:13: code.maxCalls: must not be negative, got -2`,
			`agent-tools.yaml:4:16: code.concurrency: want an integer, got "lots"`,
			`agent-tools.yaml:5:12: code.timeout: want a duration such as "30s" or "1m30s", got number 5 (add a unit: 5s)`,
			`agent-tools.yaml:6:3: code: unknown key "budget" (want allowMutations, maxCalls, concurrency, timeout, memory, cpu, maxConcurrent or maxPerIdentity)`}},
		{"code limits malformed", "code:\n  memory: lots\n  cpu: 500ms\n", []string{
			`agent-tools.yaml:2:11: code.memory: invalid size "lots": want a whole number of bytes, optionally with a unit (e.g. "256MiB")`,
			`agent-tools.yaml:3:8: code.cpu: want at least 1s (processor time is limited in whole seconds), got 500ms`}},
		{"code memory too small", "code:\n  memory: 1MiB\n  cpu: -1s\n", []string{
			`agent-tools.yaml:2:11: code.memory: want at least 32 MiB (a script's process needs room for the interpreter), got 1048576 bytes`,
			`agent-tools.yaml:3:8: code.cpu: must not be negative, got -1s`}},
		{"code block not a mapping", "code: true\n", []string{
			`agent-tools.yaml:1:7: code: want a mapping, got boolean true`}},
		{"unknown top key", "mdoe: flat\n", []string{
			`agent-tools.yaml:1:1: unknown key "mdoe"; did you mean "mode"?`}},
		{"unknown key no suggestion", "policy:\n  whatever: 1\n", []string{
			`agent-tools.yaml:2:3: policy: unknown key "whatever" (want confirm, deny, allow, approvalTimeout, rules or operators)`}},
		{"duplicate key", "mode: flat\nmode: text\n", []string{
			`agent-tools.yaml:2:1: duplicate key "mode" (first at line 1)`}},
		{"duplicate env key", "providers:\n  - id: a\n    kind: mcp\n    command: x\n    env:\n      A: 1\n      A: 2\n", []string{
			`agent-tools.yaml:7:7: providers[0].env: duplicate key "A" (first at line 6)`}},
		{"negative approval timeout", "policy:\n  approvalTimeout: -1s\n", []string{
			`agent-tools.yaml:2:20: policy.approvalTimeout: must not be negative, got -1s`}},
		{"wrong type duration", "local:\n  timeout: true\n", []string{
			`agent-tools.yaml:2:12: local.timeout: want a duration such as "30s" or "1m30s", got boolean true`}},
		{"duration without unit", "local:\n  timeout: 30\n", []string{
			`agent-tools.yaml:2:12: local.timeout: want a duration such as "30s" or "1m30s", got number 30 (add a unit: 30s)`}},
		{"bad duration", "local:\n  timeout: 30 secs\n", []string{
			`agent-tools.yaml:2:12: local.timeout: want a duration such as "30s" or "1m30s", got "30 secs"`}},
		{"negative duration", "local:\n  timeout: -5s\n", []string{
			`agent-tools.yaml:2:12: local.timeout: must not be negative, got -5s`}},
		{"wrong type bool", "local:\n  enabled: yes\n", []string{
			`agent-tools.yaml:2:12: local.enabled: want true or false, got "yes"`}},
		{"wrong type string", "mode: {a: b}\n", []string{
			`agent-tools.yaml:1:7: mode: want a string, got a mapping`}},
		{"bool as string", "local:\n  dir: true\n", []string{
			`agent-tools.yaml:2:8: local.dir: want a string, got boolean true (quote it if you mean the text: "true")`}},
		{"wrong type list", "policy:\n  deny: \"*_delete_*\"\n", []string{
			`agent-tools.yaml:2:9: policy.deny: want a list, got a string`}},
		{"wrong type mapping", "local: [a]\n", []string{
			`agent-tools.yaml:1:8: local: want a mapping, got a list`}},
		{"wrong type int", "limits:\n  maxResultChars: lots\n", []string{
			`agent-tools.yaml:2:19: limits.maxResultChars: want an integer, got "lots"`}},
		{"null list item", "policy:\n  deny: [~]\n", []string{
			`agent-tools.yaml:2:10: policy.deny[0]: want a string, got null (write "" for an empty string)`}},
		{"unknown provider key", "providers:\n  - id: ev\n    kind: mcp\n    comand: node\n", []string{
			`agent-tools.yaml:2:5: providers[0]: kind mcp needs "command" (a stdio server) or "url" (a Streamable HTTP server)`,
			`agent-tools.yaml:4:5: providers[0]: unknown key "comand"; did you mean "command"?`}},
		{"unknown kind", "providers:\n  - id: ev\n    kind: mcpp\n", []string{
			`agent-tools.yaml:3:11: providers[0].kind: unknown kind "mcpp" (want mcp, openapi, cli or workers)`}},
		{"missing id and kind", "providers:\n  - description: x\n", []string{
			`agent-tools.yaml:2:5: providers[0]: missing required key "id"`,
			`agent-tools.yaml:2:5: providers[0]: missing required key "kind" (want mcp, openapi, cli or workers)`}},
		{"bad ids", "providers:\n  - {id: Ev, kind: workers, preset: codex}\n  - {id: local, kind: workers, preset: codex}\n  - {id: " + strings.Repeat("a", 33) + ", kind: workers, preset: codex}\n", []string{
			`agent-tools.yaml:2:10: providers[0].id: invalid id "Ev": use 1 to 32 lowercase letters and digits (it becomes the tool-name prefix)`,
			`agent-tools.yaml:3:10: providers[1].id: id "local" is reserved (local, builtin or agent)`,
			`agent-tools.yaml:4:10: providers[2].id: invalid id "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": use 1 to 32 lowercase letters and digits (it becomes the tool-name prefix)`}},
		{"duplicate ids", "providers:\n  - {id: ev, kind: workers, preset: codex}\n  - {id: ev, kind: workers, preset: claude}\n", []string{
			`agent-tools.yaml:3:10: providers[1].id: duplicate provider id "ev" (first at line 2)`}},
		{"mcp both", "providers:\n  - id: ev\n    kind: mcp\n    command: node\n    url: http://x/mcp\n", []string{
			`agent-tools.yaml:5:5: providers[0].url: set either "command" or "url", not both`}},
		{"mcp url with args", "providers:\n  - id: ev\n    kind: mcp\n    url: http://x/mcp\n    args: [a]\n", []string{
			`agent-tools.yaml:5:5: providers[0].args: "args" applies only to stdio servers (with "command")`}},
		{"mcp bad url", "providers:\n  - id: ev\n    kind: mcp\n    url: ftp://x/mcp\n", []string{
			`agent-tools.yaml:4:10: providers[0].url: invalid URL "ftp://x/mcp": want http:// or https:// with a host`}},
		{"openapi needs spec", "providers:\n  - id: pets\n    kind: openapi\n    baseURL: http://x\n", []string{
			`agent-tools.yaml:2:5: providers[0]: kind openapi needs "spec" (the OpenAPI document's path or URL)`}},
		{"cli needs tools", "providers:\n  - id: gh\n    kind: cli\n", []string{
			`agent-tools.yaml:2:5: providers[0]: kind cli needs "tools" (a list of {name, argv, ...})`}},
		{"cli empty tools", "providers:\n  - id: gh\n    kind: cli\n    tools: []\n", []string{
			`agent-tools.yaml:4:12: providers[0].tools: must list at least one tool`}},
		{"cli tool problems", `providers:
  - id: gh
    kind: cli
    tools:
      - name: a
        argv: []
      - name: a
        argv: [gh]
        params:
          owner: {type: str, enum: [x]}
      - description: nameless
      - 5
`, []string{
			`agent-tools.yaml:6:15: providers[0].tools[0].argv: must not be empty: give at least the program`,
			`agent-tools.yaml:7:15: providers[0].tools[1].name: duplicate tool name "a" (first at line 5)`,
			`agent-tools.yaml:10:25: providers[0].tools[1].params.owner.type: unknown type "str" (want string, boolean, integer, number, array or object)`,
			`agent-tools.yaml:10:30: providers[0].tools[1].params.owner.enum: "enum" needs type string`,
			`agent-tools.yaml:11:9: providers[0].tools[2]: missing required key "name"`,
			`agent-tools.yaml:11:9: providers[0].tools[2]: missing required key "argv" (the program and its arguments)`,
			`agent-tools.yaml:12:9: providers[0].tools[3]: want a mapping with name and argv, got number 5`}},
		{"workers needs preset or command", "providers:\n  - id: w\n    kind: workers\n", []string{
			`agent-tools.yaml:2:5: providers[0]: kind workers needs "preset" (codex, claude, gemini or agy) or "command"`}},
		{"workers unknown preset", "providers:\n  - id: w\n    kind: workers\n    preset: codx\n", []string{
			`agent-tools.yaml:4:13: providers[0].preset: unknown preset "codx" (want codex, claude, gemini or agy, or set command)`}},
		{"field for another kind", "providers:\n  - id: w\n    kind: workers\n    preset: codex\n    spec: x.yaml\n", []string{
			`agent-tools.yaml:5:5: providers[0].spec: "spec" does not apply to kind workers`}},
		{"bad confirm", "policy:\n  confirm: humans\n", []string{
			`agent-tools.yaml:2:12: policy.confirm: unknown confirm policy "humans" (want agent, token or human)`}},
		{"bad globs", "naming: lossless\npolicy:\n  deny: [\"a[\", \"gh-cli_*\", \"\"]\n  allow: [\"Ev_*\"]\n", []string{
			`agent-tools.yaml:3:10: policy.deny[0]: pattern "a[" is not a valid glob (syntax: * ? [a-z] \x)`,
			`agent-tools.yaml:3:16: policy.deny[1]: pattern "gh-cli_*" can never match: canonical names use only a-z, 0-9 and _ ('-' is written z2dz)`,
			`agent-tools.yaml:3:28: policy.deny[2]: pattern "" is empty`,
			`agent-tools.yaml:4:11: policy.allow[0]: pattern "Ev_*" can never match: canonical names use only a-z, 0-9 and _ ('E' is written z45z)`}},
		{"readable globs", "policy:\n  deny: [\"a[\", \"gh-cli_*\", \"\"]\n  allow: [\"Ev_*\"]\n", []string{
			`agent-tools.yaml:2:10: policy.deny[0]: pattern "a[" is not a valid glob (syntax: * ? [a-z] \x)`,
			`agent-tools.yaml:2:28: policy.deny[2]: pattern "" is empty`}},
		{"negative limits", "limits:\n  maxResultChars: -1\n  loopGuard: {repeatAfter: -2, refuseAfter: 0, coolDown: -1s}\n", []string{
			`agent-tools.yaml:2:19: limits.maxResultChars: must not be negative, got -1`,
			`agent-tools.yaml:3:28: limits.loopGuard.repeatAfter: must not be negative, got -2`,
			`agent-tools.yaml:3:58: limits.loopGuard.coolDown: must not be negative, got -1s`}},
		{"refuse before repeat", "limits:\n  loopGuard: {repeatAfter: 5, refuseAfter: 2}\n", []string{
			`agent-tools.yaml:2:44: limits.loopGuard.refuseAfter: refuseAfter (2) must not be less than repeatAfter (5)`}},
		{"bad addr", "server:\n  http:\n    addr: localhost\n", []string{
			`agent-tools.yaml:3:11: server.http.addr: invalid address "localhost": want host:port, e.g. 127.0.0.1:8321`}},
		{"missing env var", "providers:\n  - id: ev\n    kind: mcp\n    command: node\n    env:\n      API_KEY: \"${EV_KEY_X}\"\n", []string{
			`agent-tools.yaml:6:16: providers[0].env.API_KEY: environment variable EV_KEY_X is not set`}},
		{"malformed refs", "providers:\n  - id: ev\n    kind: mcp\n    command: node\n    args: [\"${\", \"${1X}\", \"$HOME\", \"${A:-${B}}\", \"${A-x}\"]\n", []string{
			`agent-tools.yaml:5:12: providers[0].args[0]: unterminated reference "${": missing '}'`,
			`agent-tools.yaml:5:18: providers[0].args[1]: malformed reference "${1X}": want ${NAME} or ${NAME:-default} with NAME of letters, digits and _, not starting with a digit`,
			`agent-tools.yaml:5:27: providers[0].args[2]: lone "$" at offset 0: write $$ for a literal $, or ${NAME} for an environment variable`,
			`agent-tools.yaml:5:36: providers[0].args[3]: malformed reference "${A:-${B}": a default cannot contain $ or nested references`,
			`agent-tools.yaml:5:50: providers[0].args[4]: malformed reference "${A-x}": want ${NAME} or ${NAME:-default} with NAME of letters, digits and _, not starting with a digit`}},
		{"secrets never printed", "mode: ${BADKIND}\nlocal:\n  timeout: ${BADDUR}\nproviders:\n  - id: ev\n    kind: ${BADKIND}\n", []string{
			`agent-tools.yaml:1:7: mode: unknown mode the value of ${BADKIND} (want progressive, search, flat, text or code)`,
			`agent-tools.yaml:3:12: local.timeout: want a duration such as "30s" or "1m30s", got the value of ${BADDUR}`,
			`agent-tools.yaml:6:11: providers[0].kind: unknown kind the value of ${BADKIND} (want mcp, openapi, cli or workers)`}},
		{"empty token", "server:\n  http:\n    tokens: [\"${EMPTY}\", \"${EMPTY:-}\"]\n", []string{
			`agent-tools.yaml:3:14: server.http.tokens[0]: empty token (from ${EMPTY})`,
			`agent-tools.yaml:3:26: server.http.tokens[1]: empty token (from ${EMPTY})`}},
		{"bad env and header names", "providers:\n  - id: ev\n    kind: mcp\n    command: x\n    env: {\"A=B\": x}\n  - id: r\n    kind: mcp\n    url: http://h/mcp\n    headers: {\"Bad Header\": x}\n", []string{
			`agent-tools.yaml:5:11: providers[0].env["A=B"]: invalid environment variable name "A=B": use letters, digits and _, not starting with a digit`,
			`agent-tools.yaml:9:15: providers[1].headers["Bad Header"]: invalid header name "Bad Header"`}},
		{"merge key cycle-free and bad merge", "local:\n  <<: 5\n", []string{
			`agent-tools.yaml:2:7: local: merge key (<<) wants a mapping or a list of mappings, got number 5`}},
		{"non-string key", "providers:\n  - id: ev\n    kind: mcp\n    command: x\n    env: {true: x}\n", []string{
			`agent-tools.yaml:5:11: providers[0].env: keys must be strings, got boolean true`}},
		{"no cascade after type error", "providers:\n  - id: [ev]\n    kind: [mcp]\n", []string{
			`agent-tools.yaml:2:9: providers[0].id: want a string, got a list`,
			`agent-tools.yaml:3:11: providers[0].kind: want a string, got a list`}},
		{"no cascade after missing variable", "providers:\n  - id: r\n    kind: mcp\n    url: ${NOPE}\n    timeout: ${NOPE2}\n", []string{
			`agent-tools.yaml:4:10: providers[0].url: environment variable NOPE is not set`,
			`agent-tools.yaml:5:14: providers[0].timeout: environment variable NOPE2 is not set`}},
		{"mcp prefix other than id", "providers:\n  - id: ev\n    kind: mcp\n    command: x\n    prefix: other\n", []string{
			`agent-tools.yaml:5:13: providers[0].prefix: prefix "other": the id is the prefix; use "" to expose the tools under their own names, or rename the provider`}},
		{"mcp prefix from env never printed", "providers:\n  - id: ev\n    kind: mcp\n    command: x\n    prefix: ${BADKIND}\n", []string{
			`agent-tools.yaml:5:13: providers[0].prefix: prefix the value of ${BADKIND}: the id is the prefix; use "" to expose the tools under their own names, or rename the provider`}},
		{"prefix for another kind", "providers:\n  - id: pets\n    kind: openapi\n    spec: x.yaml\n    prefix: \"\"\n", []string{
			`agent-tools.yaml:5:5: providers[0].prefix: "prefix" does not apply to kind openapi`}},
		{"prefix wrong type", "providers:\n  - id: ev\n    kind: mcp\n    command: x\n    prefix: [a]\n", []string{
			`agent-tools.yaml:5:13: providers[0].prefix: want a string, got a list`}},
		{"empty provider entry", "providers:\n  -\n", []string{
			`agent-tools.yaml:2:4: providers[0]: empty provider entry`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(t, tt.src)
			if err == nil {
				t.Fatalf("no error; config %+v", c)
			}
			if c != nil {
				t.Errorf("config returned along with errors")
			}
			got := errorsOf(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, s := range testEnv {
				if len(s) > 5 && strings.Contains(err.Error(), s) {
					t.Errorf("error leaks env value %q", s)
				}
			}
		})
	}
}

func TestErrorsStruct(t *testing.T) {
	_, err := parse(t, "providers:\n  - id: ev\n    kind: mcpp\nmode: x\n")
	e, ok := config.AsErrors(err)
	if !ok || len(e.List) != 2 {
		t.Fatalf("err = %#v", err)
	}
	want := config.Error{File: "agent-tools.yaml", Line: 3, Col: 11, Path: "providers[0].kind", Msg: `unknown kind "mcpp" (want mcp, openapi, cli or workers)`}
	if e.List[0] != want {
		t.Errorf("got %#v\nwant %#v", e.List[0], want)
	}
	var one config.Error
	if !errors.As(err, &one) || one != want {
		t.Errorf("errors.As(Error) = %#v", one)
	}
}

func TestInterpolation(t *testing.T) {
	src := `providers:
  - id: ev
    kind: mcp
    command: node
    args: ["$${HOME}", "a$$b", "${EMPTY:-dflt}", "${UNSET:-d e f}", "${EMPTY}", "x${EV_KEY}y${NUM}"]
    env:
      API_KEY: ${EV_KEY}
    timeout: ${T}
    requireConfirm: ${FLAG}
local:
  enabled: ${FLAG:-true}
limits:
  maxResultChars: ${NUM}
`
	c, err := parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Providers[0]
	m := p.Spec.(*mcp.Spec)
	wantArgs := []string{"${HOME}", "a$b", "dflt", "d e f", "", "xev-secret-value" + "y7"}
	if !reflect.DeepEqual(m.Args, wantArgs) {
		t.Errorf("args = %q, want %q", m.Args, wantArgs)
	}
	if m.Env["API_KEY"] != "ev-secret-value" || p.Timeout.Duration != 45*time.Second || p.RequireConfirm {
		t.Errorf("provider = %+v", p)
	}
	if c.Local.Enabled || c.Limits.MaxResultChars != 7 {
		t.Errorf("local.enabled = %v, maxResultChars = %d", c.Local.Enabled, c.Limits.MaxResultChars)
	}
	// Keys are never interpolated.
	if _, err := parse(t, "providers:\n  - id: ev\n    kind: mcp\n    command: x\n    env: {\"${EV_KEY}\": a}\n"); err == nil {
		t.Error("a ${...} key was accepted as an env name without error")
	}
}

func TestDisabledProviderMissingEnv(t *testing.T) {
	c, err := parse(t, "providers:\n  - id: ev\n    kind: mcp\n    url: https://${NOPE3}/mcp\n    timeout: ${NOPE3}\n    enabled: false\n    headers: {A: \"${NOPE1}\", B: \"${NOPE2}${NOPE1}\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Providers[0].Unresolved; !reflect.DeepEqual(got, []string{"NOPE3", "NOPE1", "NOPE2"}) {
		t.Errorf("Unresolved = %q", got)
	}
	// Enabled (by default): the same is an error.
	_, err = parse(t, "providers:\n  - id: ev\n    kind: mcp\n    command: x\n    env: {A: \"${NOPE1}\"}\n")
	if err == nil {
		t.Error("missing variable in an enabled provider accepted")
	}
}

func TestValid(t *testing.T) {
	src := `mode: flat
local:
  dir: scripts
  requireConfirm: false
  timeout: 1m30s
  description: repo scripts
defaults: &mcpdefaults
providers:
  - &ev
    id: ev
    kind: mcp
    description: Reference server
    discoverHint: echo
    command: node
    args: [server.js]
    cwd: srv
    env: { API_KEY: "${EV_KEY}", PORT: 8080 }
    readonly: [echo, add]
    trustAnnotations: true
    timeout: 30s
  - <<: *ev
    id: ev2
    args: [other.js]
  - id: remote
    kind: mcp
    url: https://example.com/mcp
    headers: { Authorization: "Bearer ${REMOTE_TOKEN}" }
  - id: pets
    kind: openapi
    spec: api/openapi.yaml
    baseURL: http://127.0.0.1:8080/v1
  - id: gh
    kind: cli
    requireConfirm: false
    tools:
      - name: list_repos
        description: List repos
        argv: [gh, repo, list, "{owner}"]
        params:
          owner: { type: string, required: true, enum: [a, b] }
          limit: { type: integer }
          raw: {}
        readonly: true
        timeout: 10s
  - id: codex
    kind: workers
    preset: codex
    enabled: false
policy:
  confirm: human
  deny: ["*_delete_*", "gh_[a-c]*", "ev_\\_x"]
  allow: []
server:
  http:
    addr: "[::1]:0"
    tokens: ["${AGENT_TOOLS_TOKEN}"]
audit:
  path: logs/audit.jsonl
limits:
  maxResultChars: 0
  loopGuard: { repeatAfter: 2, refuseAfter: 2, coolDown: 0 }
`
	// "defaults" is unknown at the top level: check it is reported, then drop it.
	if _, err := parse(t, src); err == nil || !strings.Contains(err.Error(), `unknown key "defaults"`) {
		t.Fatalf("err = %v", err)
	}
	src = strings.Replace(src, "defaults: &mcpdefaults\n", "", 1)
	c, err := parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs(".")
	if c.Dir != dir || c.Path != filepath.Join(dir, "agent-tools.yaml") {
		t.Errorf("Dir, Path = %q, %q", c.Dir, c.Path)
	}
	if c.Local.Dir != filepath.Join(dir, "scripts") || c.Audit.Path != filepath.Join(dir, "logs/audit.jsonl") {
		t.Errorf("paths not resolved: %q %q", c.Local.Dir, c.Audit.Path)
	}
	ev2p, ok := c.Provider("ev2")
	ev2 := ev2p.Spec.(*mcp.Spec)
	if !ok || ev2.Command != "node" || !reflect.DeepEqual(ev2.Args, []string{"other.js"}) || ev2.Cwd != filepath.Join(dir, "srv") || ev2.Env["PORT"] != "8080" {
		t.Errorf("merged provider = %+v", ev2)
	}
	pets, _ := c.Provider("pets")
	if o := pets.Spec.(*openapi.Spec); o.Spec != filepath.Join(dir, "api/openapi.yaml") {
		t.Errorf("spec = %q", o.Spec)
	}
	gh, _ := c.Provider("gh")
	tool := gh.Spec.(*cli.Spec).Tools[0]
	if tool.Params["raw"].Type != "string" || !tool.Params["owner"].Required || tool.Timeout.Duration != 10*time.Second || !tool.ReadOnly {
		t.Errorf("cli tool = %+v", tool)
	}
	if c.Limits.LoopGuard.CoolDown.Duration != 0 || c.Server.HTTP.Tokens[0] != "http-secret-value" {
		t.Errorf("limits/server = %+v %+v", c.Limits, c.Server)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("re-Validate: %v", err)
	}
	r := c.Redacted()
	if r.Server.HTTP.Tokens[0] != "***" || r.Providers[0].Spec.(*mcp.Spec).Env["API_KEY"] != "***" || c.Providers[0].Spec.(*mcp.Spec).Env["API_KEY"] != "ev-secret-value" {
		t.Errorf("Redacted wrong or aliased")
	}
}

func TestPrefix(t *testing.T) {
	c, err := parse(t, "providers:\n  - {id: ev, kind: mcp, command: x, prefix: \"\"}\n  - {id: ev2, kind: mcp, command: x, prefix: ev2}\n  - {id: ev3, kind: mcp, command: x}\n  - {id: ev4, kind: mcp, command: x, prefix: ~}\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.Providers {
		if m := p.Spec.(*mcp.Spec); m.Prefix == nil {
			got = append(got, "<nil>")
		} else {
			got = append(got, strconv.Quote(*m.Prefix))
		}
	}
	if want := []string{`""`, `"ev2"`, "<nil>", "<nil>"}; !reflect.DeepEqual(got, want) {
		t.Errorf("prefixes = %v, want %v", got, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("re-Validate: %v", err)
	}
}

func TestDefaultFindLoad(t *testing.T) {
	dir := t.TempDir()
	d := config.Default(dir)
	if d.Mode != "progressive" || d.Local.Dir != filepath.Join(dir, ".agents/tools") || !d.Local.RequireConfirm ||
		!d.Local.Enabled || d.Local.Timeout.Duration != 60*time.Second || len(d.Providers) != 0 || d.Path != "" || d.Dir != dir {
		t.Errorf("Default = %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("Default invalid: %v", err)
	}
	if _, ok := config.Find(dir); ok {
		t.Error("Find found a missing file")
	}
	if _, err := config.Load(filepath.Join(dir, config.FileName), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load missing: %v", err)
	}
	path := filepath.Join(dir, config.FileName)
	if err := os.WriteFile(path, []byte("# only a comment\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, ok := config.Find(dir)
	if !ok || p != path {
		t.Errorf("Find = %q, %v", p, ok)
	}
	c, err := config.Load(p, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(config.StripMeta(c), config.StripMeta(func() *config.Config { x := config.Default(dir); x.Path = path; return x }())) {
		t.Errorf("empty file = %+v, want defaults", c)
	}
	if err := os.WriteFile(path, []byte("mode: nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = config.Load(p, lookup)
	if want := path + ":1:7: mode: unknown mode \"nope\" (want progressive, search, flat, text or code)"; err == nil || err.Error() != want {
		t.Errorf("Load error = %v, want %s", err, want)
	}
}

func TestValidateCodeBuilt(t *testing.T) {
	c := config.Default(".")
	c.Mode = "bogus"
	c.Providers = append(c.Providers, config.Provider{ID: "x", Kind: "cli", Enabled: true})
	err := c.Validate()
	want := "mode: unknown mode \"bogus\" (want progressive, search, flat, text or code)\n" +
		"providers[0]: kind cli needs \"tools\" (a list of {name, argv, ...})"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestDuration(t *testing.T) {
	d := config.Duration{90 * time.Second}
	b, err := yaml.Marshal(struct{ T config.Duration }{d})
	if err != nil || string(b) != "t: 1m30s\n" {
		t.Errorf("yaml = %q, %v", b, err)
	}
	var back struct{ T config.Duration }
	if err := yaml.Unmarshal(b, &back); err != nil || back.T != d {
		t.Errorf("yaml back = %v, %v", back.T, err)
	}
	j, _ := d.MarshalJSON()
	var dj config.Duration
	if string(j) != `"1m30s"` || dj.UnmarshalJSON(j) != nil || dj != d {
		t.Errorf("json = %s -> %v", j, dj)
	}
	if err := dj.UnmarshalJSON([]byte(`30`)); err == nil {
		t.Error("number accepted as a JSON duration")
	}
}

var exampleLine = regexp.MustCompile(`^#([^ ]|  )`)

func TestStarter(t *testing.T) {
	s := config.Starter()
	c, err := config.Parse(config.FileName, []byte(s), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("starter does not parse: %v", err)
	}
	if c.Mode != "progressive" || len(c.Providers) != 0 {
		t.Errorf("starter = %+v", c)
	}
	// Uncomment the examples: they must parse too.
	var b strings.Builder
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if exampleLine.MatchString(line) || line == "#" {
			line = line[1:]
			n++
		}
		b.WriteString(line + "\n")
	}
	c, err = config.Parse(config.FileName, []byte(b.String()), lookup)
	if err != nil {
		t.Fatalf("uncommented starter does not parse: %v\n%s", err, b.String())
	}
	kinds := map[string]bool{}
	for _, p := range c.Providers {
		kinds[p.Kind] = true
	}
	for _, k := range config.KindNames() { // init shows an example of every kind
		if !kinds[k] {
			t.Errorf("the starter has no example of kind %s", k)
		}
	}
	if n < 20 || len(c.Providers) != 6 || c.Providers[2].Skills == "" || len(c.Server.HTTP.Tokens) != 1 || len(c.Policy.Allow) != 1 {
		t.Errorf("uncommented %d lines: %+v", n, c)
	}
	// Without the referenced variables, the examples name them.
	_, err = config.Parse(config.FileName, []byte(b.String()), func(string) (string, bool) { return "", false })
	for _, v := range []string{"EV_KEY", "REMOTE_TOKEN", "AGENT_TOOLS_TOKEN", "TASKS_API_KEY"} {
		if err == nil || !strings.Contains(err.Error(), "environment variable "+v+" is not set") {
			t.Errorf("missing %s not reported: %v", v, err)
		}
	}
}

func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("policy:\n  <<: {deny: *a8}\n")
	start := time.Now()
	_, err := parse(t, b.String())
	if err == nil {
		t.Fatal("no error")
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	// Expansion through the schema's nesting: 100 providers × 100 tools × 100 enum values.
	var d strings.Builder
	d.WriteString("x:\n  - &e [" + strings.TrimSuffix(strings.Repeat("v, ", 100), ", ") + "]\n")
	d.WriteString("  - &t {name: t, argv: [a], params: {p: {enum: *e}}}\n")
	d.WriteString("  - &ts [" + strings.TrimSuffix(strings.Repeat("*t, ", 100), ", ") + "]\n")
	d.WriteString("  - &p {id: p, kind: cli, tools: *ts}\n")
	d.WriteString("providers: [" + strings.TrimSuffix(strings.Repeat("*p, ", 100), ", ") + "]\n")
	start = time.Now()
	_, err = parse(t, d.String())
	if err == nil || !strings.Contains(err.Error(), "too many alias expansions") {
		t.Errorf("deep bomb: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("deep bomb took %v", time.Since(start))
	}
	// Self-referencing merge.
	if _, err := parse(t, "local: &l\n  <<: *l\n"); err == nil {
		t.Error("self merge accepted")
	}
}

// fuzzMaxInput bounds FuzzParse inputs. Seeds are small on purpose: the
// fuzzer minimises every new interesting input, and with the 2.5 KB starter
// and the golden files as seeds it spent nearly all its time minimising
// (47 executions in 20 s). Minimising costs about the square of the input's
// length in parses, so inputs are capped at a few lines. The starter and
// goldens are covered by their own tests; these seeds reach every section
// and the interpolation paths.
const fuzzMaxInput = 256

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"mode: flat\nlocal: {enabled: true, timeout: 30s}\n",
		"providers:\n  - id: ev\n    kind: mcp\n    command: node\n    env: {A: \"${EV_KEY}\"}\n",
		"providers:\n  - {id: r, kind: mcp, url: \"http://h/m?k=${REMOTE_TOKEN}\", headers: {X: \"${T:-d}\"}}\n",
		"providers:\n  - {id: c, kind: cli, tools: [{name: t, argv: [echo, \"{x}\"], params: {x: {type: string}}}]}\n",
		"server: {http: {addr: \"127.0.0.1:0\", tokens: [\"${AGENT_TOOLS_TOKEN}\"], rateLimit: {perSecond: 2}}}\n",
		"a: &a {<<: *a}\n",
		"policy: {deny: [\"a[\"]}\nlimits: {maxResultChars: -1}\naudit: {path: off}\n",
		"security: {results: {scan: redact, spotlight: true}}\n",
		"cache:\n  - {tools: [\"weather_*\", \"a[\"], ttl: 25h, perIdentity: false}\n  - {ttl: 0s}\nlimits: {cacheBytes: 1MiB}\n",
		"quotas:\n  - {identities: [\"token:*\"], tools: [\"gh_*\"], rate: 30/min, burst: 10, concurrent: 4, tokens: 200000/day}\n  - {rate: 0/s, burst: 0}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzMaxInput {
			return
		}
		c, err := config.Parse("f.yaml", data, lookup)
		if err != nil {
			e, ok := config.AsErrors(err)
			if !ok || len(e.List) == 0 {
				t.Fatalf("error is not a non-empty *Errors: %v", err)
			}
			for _, x := range e.List {
				if x.Line <= 0 || x.File != "f.yaml" || x.Msg == "" {
					t.Fatalf("error without position: %#v", x)
				}
			}
			if c != nil {
				t.Fatal("config returned with errors")
			}
			return
		}
		if c == nil {
			t.Fatal("nil config without error")
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed config does not re-validate: %v\ninput: %q", err, data)
		}
	})
}

func TestCodeBlock(t *testing.T) {
	c, err := parse(t, "mode: code\ncode:\n  allowMutations: true\n  maxCalls: 7\n  concurrency: 2\n  timeout: 45s\n  memory: 512MiB\n  cpu: 20s\n")
	if err != nil {
		t.Fatal(err)
	}
	want := config.Code{AllowMutations: true, MaxCalls: 7, Concurrency: 2, Timeout: config.Duration{45 * time.Second},
		Memory: 512 << 20, CPU: config.Duration{20 * time.Second}}
	if c.Mode != "code" || c.Code != want {
		t.Fatalf("mode %q code %+v, want %+v", c.Mode, c.Code, want)
	}
	if c, err := parse(t, "mode: search\n"); err != nil || c.Code != (config.Code{}) {
		t.Fatalf("absent block: %+v %v", c, err)
	}
}
