package facade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/builtin"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// The gate's matrix: every door a call can come through, against every
// restriction, each cell refusing the same way. The doors are one list
// (gateDoors) and the restrictions another (gateRestrictions): a new door
// is in the matrix by being added to the list. A restriction that hides
// the target must answer exactly as a tool that does not exist
// (UNKNOWN_TOOL, no schema, no suggestion of the hidden name, the backend
// never reached); one that refuses a visible target answers DENIED with
// its reason. The target is weather_send_alert, called with arguments that
// fail its schema, so a door that validated before deciding would leak the
// schema.

// hiddenGlob matches the target tool and the target resource, nothing else.
const hiddenGlob = "weather_send*"

const (
	targetTool = "weather_send_alert"
	targetURI  = "weather_send:feed" // a resource of the same provider, for the passthrough door
)

// gateEnv is one facade over a weather provider and the built-ins, with
// the restriction's rules, profile and catalog.
type gateEnv struct {
	h       *harness
	fac     *facade.Facade
	run     pipeline.Handler
	backend *providertest.Fake
}

type gateSetup struct {
	rules      policy.Rules
	access     *policy.Access
	profile    string
	quarantine bool // the pipeline's catalog holds the target back (a changed pin)
	readOnly   bool // scripts may not mutate (code.allowMutations off)
	grouped    bool // progressive mode groups every provider behind one discover and one call
}

func newGateEnv(t *testing.T, mode facade.Mode, s gateSetup) *gateEnv {
	t.Helper()
	w := providertest.New(catalog.ProviderInfo{ID: "weather", Kind: "fake", Description: "Weather forecasts and alerts", RequireConfirm: true},
		providertest.Tool("forecast", "Weather forecast for a city.", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, true),
		providertest.Tool("send_alert", "Send a weather alert to subscribers.", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`, false),
	)
	w.Func = func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
		return &provider.Result{Text: "ran"}, nil
	}
	reg := registry.New(nil)
	for _, p := range []provider.Provider{builtin.New(builtin.Options{Code: builtin.CodeOptions{AllowMutations: !s.readOnly}}), w} {
		if err := reg.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	var cat pipeline.Catalog = reg
	if s.quarantine {
		cat = heldCatalog{reg, targetTool}
	}
	run := pipeline.New(pipeline.Options{Catalog: cat, Rules: s.rules, Access: s.access,
		Execute: pipeline.ExecuteOptions{DefaultTimeout: 5 * time.Second}})
	fo := facade.Options{Mode: mode, Rules: s.rules, Version: "test", Profile: s.profile,
		ScriptsMayMutate: func() bool { return !s.readOnly }}
	if s.access != nil {
		fo.Access = func() *policy.Access { return s.access }
	}
	var fcat facade.Catalog = reg
	if s.grouped {
		fcat = groupCat{reg, 1}
	}
	fac := facade.New(fcat, run, fo)
	reg.Refresh(context.Background())
	fac.Sync()
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ss, err := fac.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "gate-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &gateEnv{h: &harness{t: t, reg: reg, fac: fac, cs: cs}, fac: fac, run: run, backend: w}
}

// heldCatalog holds one tool back as a pin store does for a changed
// definition under security.pin: quarantine.
type heldCatalog struct {
	*registry.Registry
	held string
}

func (c heldCatalog) Lookup(name string) (catalog.Tool, bool) {
	if name == c.held {
		return catalog.Tool{}, false
	}
	return c.Registry.Lookup(name)
}

func (c heldCatalog) Find(p, name string) (catalog.Tool, bool) {
	t, ok := c.Registry.Find(p, name)
	if ok && t.Canonical == c.held {
		return catalog.Tool{}, false
	}
	return t, ok
}

func (c heldCatalog) Held(name string) (string, bool) {
	if name == c.held {
		return "weather", true
	}
	return "", false
}

// badArgs fail the target's schema (text must be a string).
var badArgs = map[string]any{"text": 5}

// gateDoor is one way in. try makes the call and returns the error
// envelope's fields ("code", and whether a schema or the target's name
// leaked), or nil when the call ran.
type gateDoor struct {
	name string
	mode facade.Mode
	// op: the door asks for a resource, not a tool (restrictions that name
	// tools do not apply).
	op bool
	// script: the door is a script's (read-only scripts apply).
	script bool
	// grouped: progressive mode with its providers grouped.
	grouped bool
	// see: the door only looks (describe, search): a visible target that
	// may not be called (quarantine) is still seen.
	see bool
	try func(t *testing.T, e *gateEnv) map[string]any
}

// scriptTry runs body in execute_javascript; body returns {code, schema, dym}.
func scriptTry(body string) func(t *testing.T, e *gateEnv) map[string]any {
	return func(t *testing.T, e *gateEnv) map[string]any {
		t.Helper()
		text, env := e.h.call("execute_javascript", map[string]any{"code": body})
		if env != nil {
			return env // the run itself was refused
		}
		var out struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			t.Fatalf("script result %s: %v", text, err)
		}
		if out.Result["code"] == "RAN" {
			return nil
		}
		return out.Result
	}
}

// teachTry makes a call that misses and reports whether the teaching
// named the target (did_you_mean or correct_shape): nil when
// it did (the caller sees it), UNKNOWN_TOOL when it named nothing hidden.
func teachTry(name string, args map[string]any) func(t *testing.T, e *gateEnv) map[string]any {
	return func(t *testing.T, e *gateEnv) map[string]any {
		t.Helper()
		text, env := e.h.call(name, args)
		if env == nil {
			t.Fatalf("a miss ran: %s", text)
		}
		taught, _ := json.Marshal([]any{env["did_you_mean"], env["correct_shape"]})
		if strings.Contains(string(taught), "send_alert") {
			return nil
		}
		return map[string]any{"code": "UNKNOWN_TOOL"}
	}
}

var gateDoors = []gateDoor{
	// Teachings that name a tool (#44 item 2): a misspelt name, a bare own
	// name, another mode's meta-tool. Each asks the gate what this caller
	// may see; a hidden target is never suggested.
	{name: "flat did_you_mean", mode: facade.Flat, see: true, try: teachTry("weather_send_alrt", map[string]any{})},
	{name: "flat correct_shape", mode: facade.Flat, see: true, try: teachTry("send_alert", map[string]any{"text": "x"})},
	{name: "progressive: another mode's meta-tool", mode: facade.Progressive, see: true, try: teachTry("agent_tools_call", map[string]any{"tool": "send_alert", "arguments": map[string]any{}})},
	{name: "search did_you_mean", mode: facade.Search, see: true, try: teachTry("agent_tools_call", map[string]any{"tool": "weather_send_alrt", "arguments": map[string]any{}})},
	{name: "code: another mode's meta-tool", mode: facade.Code, see: true, try: teachTry("agent_tools_weather_call", map[string]any{"toolName": "send_alert", "arguments": map[string]any{}})},
	{name: "flat tools/call", mode: facade.Flat, try: func(t *testing.T, e *gateEnv) map[string]any {
		_, env := e.h.call(targetTool, badArgs)
		return env
	}},
	{name: "progressive call", mode: facade.Progressive, try: func(t *testing.T, e *gateEnv) map[string]any {
		_, env := e.h.call("agent_tools_weather_call", map[string]any{"toolName": "send_alert", "arguments": badArgs})
		return env
	}},
	{name: "grouped progressive call", mode: facade.Progressive, grouped: true, try: func(t *testing.T, e *gateEnv) map[string]any {
		_, env := e.h.call("agent_tools_call", map[string]any{"tool": targetTool, "arguments": badArgs})
		return env
	}},
	{name: "grouped progressive discover", mode: facade.Progressive, grouped: true, see: true, try: func(t *testing.T, e *gateEnv) map[string]any {
		text, env := e.h.call("agent_tools_discover", map[string]any{"query": "send a weather alert to subscribers"})
		if env != nil {
			return env
		}
		if strings.Contains(text, targetTool) {
			return nil // listed: the caller sees it
		}
		return map[string]any{"code": "UNKNOWN_TOOL"}
	}},
	{name: "search mode call", mode: facade.Search, try: func(t *testing.T, e *gateEnv) map[string]any {
		_, env := e.h.call("agent_tools_call", map[string]any{"tool": targetTool, "arguments": badArgs})
		return env
	}},
	{name: "text mode exec", mode: facade.Text, try: func(t *testing.T, e *gateEnv) map[string]any {
		_, env := e.h.call("agent_tools_exec", map[string]any{"command": "call " + targetTool + " bogus=1"})
		return env
	}},
	{name: "code tools.call", mode: facade.Code, script: true, try: scriptTry(`
		try { await tools.call(` + strconv.Quote(targetTool) + `, {text: 5}); return {code: "RAN"} }
		catch (e) { return {code: e.code, message: e.message, expected_schema: e.expected_schema, did_you_mean: e.did_you_mean, reason: e.envelope && e.envelope.error.reason} }`)},
	{name: "code tools.describe", mode: facade.Code, script: true, see: true, try: scriptTry(`
		try { tools.describe(` + strconv.Quote(targetTool) + `); return {code: "RAN"} } catch (e) { return {code: e.code} }`)},
	{name: "code tools.search", mode: facade.Code, script: true, see: true, try: scriptTry(`
		return {code: tools.search("send a weather alert", {limit: 20}).some(t => t.name === ` + strconv.Quote(targetTool) + `) ? "RAN" : "UNKNOWN_TOOL"}`)},
	{name: "front door (cli call, Session.Call, console call)", mode: facade.Progressive, try: func(t *testing.T, e *gateEnv) map[string]any {
		args, _ := json.Marshal(badArgs)
		req := e.fac.Request(facade.Caller{Door: policy.DoorCLI, Via: "cli", Tool: targetTool, Args: args})
		resp := e.run(context.Background(), req)
		if resp.Err == nil {
			return nil
		}
		return resp.Err.Body()["error"].(map[string]any)
	}},
	{name: "passthrough resources/read", mode: facade.Flat, op: true, try: func(t *testing.T, e *gateEnv) map[string]any {
		req := &pipeline.Request{Via: "resources/read", Tool: targetURI, Args: json.RawMessage(`{}`), Op: true,
			Caller:   policy.Caller{Identity: "process:1", Door: policy.DoorPassthrough, Profile: e.fac.Profile()},
			Resolved: catalog.Tool{Provider: "weather", Name: targetURI, Canonical: targetURI, ReadOnly: true}, Backend: e.backend}
		resp := e.run(context.Background(), req)
		if resp.Err == nil {
			return nil
		}
		return resp.Err.Body()["error"].(map[string]any)
	}},
}

// gateRestriction is one way a caller may be held back, and what it does
// to the target: hide it, or refuse it with a reason.
type gateRestriction struct {
	name  string
	setup gateSetup
	// hides: the target answers as if it did not exist; else the call is
	// DENIED with reason (when set).
	hides  bool
	reason string
	// applies says which doors the restriction concerns (nil: all).
	applies func(d gateDoor) bool
}

func identityDeny(glob string) *policy.Access {
	return policy.NewAccess(nil, []policy.IdentityRule{{Identities: []string{"process:*"}, Rules: policy.Rules{Deny: []string{glob}}}})
}

func profile(v policy.View) *policy.Access {
	return policy.NewAccess(map[string]policy.View{"p": v}, nil)
}

var gateRestrictions = []gateRestriction{
	{name: "policy deny", setup: gateSetup{rules: policy.Rules{Deny: []string{hiddenGlob}}}, hides: true},
	{name: "profile providers", setup: gateSetup{access: profile(policy.View{Providers: []string{"builtin"}}), profile: "p"}, hides: true},
	// A profile's tool globs decide forwarded requests too, by their
	// canonical name: an allow list is exhaustive (#44 item 1).
	{name: "profile tools deny", setup: gateSetup{access: profile(policy.View{Tools: policy.Rules{Deny: []string{hiddenGlob}}}), profile: "p"}, hides: true},
	{name: "profile tools allow", setup: gateSetup{access: profile(policy.View{Tools: policy.Rules{Allow: []string{"weather_forecast"}}}), profile: "p"}, hides: true},
	{name: "identity allow", setup: gateSetup{access: policy.NewAccess(nil, []policy.IdentityRule{{Identities: []string{"process:*"}, Rules: policy.Rules{Allow: []string{"weather_forecast"}}}})}, hides: true},
	{name: "identity rule", setup: gateSetup{access: identityDeny(hiddenGlob)}, hides: true},
	{name: "quarantine", setup: gateSetup{quarantine: true}, reason: "quarantined",
		applies: func(d gateDoor) bool { return !d.op && !d.see }},
	{name: "read-only script", setup: gateSetup{readOnly: true}, reason: "read_only_script",
		applies: func(d gateDoor) bool { return d.script && !d.see }},
}

func TestGateMatrix(t *testing.T) {
	// The control row: with no restriction every door reaches the target
	// (a call with wrong arguments is told its schema; a look finds it), so
	// a refusal below is the restriction's, not a door that never worked.
	for _, d := range gateDoors {
		t.Run("no restriction/"+d.name, func(t *testing.T) {
			got := d.try(t, newGateEnv(t, d.mode, gateSetup{grouped: d.grouped}))
			switch {
			case d.see || d.op:
				if got != nil {
					t.Fatalf("unrestricted, the door does not reach the target: %v", got)
				}
			case fmt.Sprint(got["code"]) != "INVALID_ARGUMENTS" || got["expected_schema"] == nil:
				t.Fatalf("unrestricted, wrong arguments answered %v, want INVALID_ARGUMENTS with the schema", got)
			}
		})
	}
	cells := 0
	for _, r := range gateRestrictions {
		for _, d := range gateDoors {
			if r.applies != nil && !r.applies(d) {
				continue
			}
			cells++
			t.Run(r.name+"/"+d.name, func(t *testing.T) {
				setup := r.setup
				setup.grouped = d.grouped
				e := newGateEnv(t, d.mode, setup)
				env := d.try(t, e)
				if env == nil {
					t.Fatalf("the call ran through %s under %s", d.name, r.name)
				}
				if n := len(e.backend.Calls()); n != 0 {
					t.Fatalf("the backend was reached %d times", n)
				}
				dump := fmt.Sprint(env)
				if r.hides {
					if fmt.Sprint(env["code"]) != "UNKNOWN_TOOL" {
						t.Fatalf("a hidden target answered %v, want UNKNOWN_TOOL as for one that does not exist", env)
					}
					if _, leak := env["expected_schema"]; leak || strings.Contains(fmt.Sprint(env["did_you_mean"]), "send") || strings.Contains(dump, "Send a weather alert") {
						t.Fatalf("the hidden target leaked: %v", env)
					}
					return
				}
				if fmt.Sprint(env["code"]) != "DENIED" || !strings.Contains(dump, r.reason) {
					t.Fatalf("got %v, want DENIED (%s)", env, r.reason)
				}
			})
		}
	}
	// The size of the matrix, for the record: a new door or restriction
	// grows it, a cell dropped by mistake shrinks it.
	if want := 104; cells != want {
		t.Errorf("the matrix has %d cells, want %d: update the count with the lists", cells, want)
	}
}
