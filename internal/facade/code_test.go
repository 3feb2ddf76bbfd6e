package facade_test

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/builtin"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// newCodeHarness serves the built-ins and a weather provider (forecast and
// geocode read-only, alert mutating) with an audit log.
func newCodeHarness(t *testing.T, mode facade.Mode, rules policy.Rules, bo builtin.Options, client ...*sdk.ClientOptions) (*harness, *testutil.SyncBuffer) {
	t.Helper()
	return newCodeHarnessWith(t, mode, rules, nil, bo, client...)
}

// newCodeHarnessWith is newCodeHarness with profiles and per-identity rules.
func newCodeHarnessWith(t *testing.T, mode facade.Mode, rules policy.Rules, access *policy.Access, bo builtin.Options, client ...*sdk.ClientOptions) (*harness, *testutil.SyncBuffer) {
	t.Helper()
	w := providertest.New(catalog.ProviderInfo{ID: "weather", Kind: "fake", Description: "Weather forecasts and places", RequireConfirm: true},
		providertest.Tool("forecast", "Weather forecast for a city: temperature in Celsius.", `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`, true),
		providertest.Tool("geocode", "Latitude and longitude of a city or place.", `{"type":"object","properties":{"place":{"type":"string"}},"required":["place"]}`, true),
		providertest.Tool("send_alert", "Send a weather alert to subscribers.", `{"type":"object","properties":{"text":{"type":"string"}}}`, false),
	)
	w.Func = func(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
		switch tool.Name {
		case "forecast":
			return &provider.Result{Text: `{"temp":21,"sky":"clear"}`}, nil
		case "geocode":
			return &provider.Result{Text: `{"lat":48.14,"lon":11.58}`}, nil
		}
		return &provider.Result{Text: "sent"}, nil
	}
	reg := registry.New(nil)
	for _, p := range []provider.Provider{builtin.New(bo), w} {
		if err := reg.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	audit := &testutil.SyncBuffer{}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: rules, Access: access, AuditTo: audit, Execute: pipeline.ExecuteOptions{DefaultTimeout: 5 * time.Second}})
	fo := facade.Options{Mode: mode, Rules: rules, Version: "test", ScriptsMayMutate: func() bool { return bo.Code.AllowMutations }}
	if access != nil {
		fo.Access = func() *policy.Access { return access }
	}
	fac := facade.New(reg, run, fo)
	reg.Refresh(context.Background())
	fac.Sync()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := fac.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var (
		co   *sdk.ClientOptions
		sess *sdk.ClientSessionOptions
	)
	if len(client) > 0 {
		// Elicitation inside a call needs a protocol version that allows it.
		co, sess = client[0], &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "code-client", Version: "1"}, co).Connect(ctx, ct, sess)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return &harness{t: t, gh: w, reg: reg, fac: fac, cs: cs}, audit
}

const combineScript = `
const [geo] = tools.search("latitude longitude of a place", {limit: 1});
const f = tools.describe("weather_forecast");
const [where, wx] = await Promise.all([tools.call(geo.name, {place: "Munich"}), tools.call(f.name, {city: "Munich"})]);
return {lat: where.lat, temp: wx.temp, sig: f.signature};`

func TestCodeModeScriptCallsToolsUnderOneParent(t *testing.T) {
	h, audit := newCodeHarness(t, facade.Code, policy.Rules{}, builtin.Options{})
	if got := strings.Join(h.names(), ","); got != "agent_tools_help,agent_tools_search,execute_javascript" {
		t.Fatalf("code mode publishes %s", got)
	}
	text, e := h.call("execute_javascript", map[string]any{"code": combineScript})
	if e != nil {
		t.Fatalf("script failed: %v", e)
	}
	var out struct {
		Result struct {
			Lat  float64
			Temp float64
			Sig  string
		}
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil || out.Result.Lat != 48.14 || out.Result.Temp != 21 ||
		out.Result.Sig != "weather_forecast(args: {city: string, days?: number}): Promise<any>" {
		t.Fatalf("result %s (%v)", text, err)
	}
	recs := auditRecords(t, audit)
	if len(recs) != 3 {
		t.Fatalf("audit has %d records, want two calls and the script: %+v", len(recs), recs)
	}
	parent := recs[2]
	if parent.Tool != "execute_javascript" || parent.Parent != "" || parent.RequestID == "" || parent.Outcome != "ok" {
		t.Fatalf("script record %+v", parent)
	}
	tools := map[string]bool{}
	for _, r := range recs[:2] {
		if r.Parent != parent.RequestID || r.Via != "execute_javascript" || r.Outcome != "ok" || r.Client != "code-client" {
			t.Fatalf("call record %+v not under %s", r, parent.RequestID)
		}
		tools[r.Tool] = true
	}
	if !tools["weather_forecast"] || !tools["weather_geocode"] {
		t.Fatalf("calls %v", tools)
	}
}

func TestCodeModeErrorsInsideScripts(t *testing.T) {
	tests := []struct {
		name  string
		rules policy.Rules
		code  builtin.CodeOptions
		js    string
		want  string
	}{
		{"denied tool is unknown to the script", policy.Rules{Deny: []string{"weather_geocode"}}, builtin.CodeOptions{},
			`try { await tools.call("weather_geocode", {place: "x"}) } catch (e) { return e.code }`, `"UNKNOWN_TOOL"`},
		{"denied tool is not found", policy.Rules{Deny: []string{"weather_geocode"}}, builtin.CodeOptions{},
			`return tools.search("latitude longitude of a place").map(t => t.name).includes("weather_geocode")`, `false`},
		{"bad arguments teach the schema", policy.Rules{}, builtin.CodeOptions{},
			`try { await tools.call("weather_forecast", {town: "x"}) } catch (e) { return [e.code, e.expected_schema.required[0], e.problems[0].message] }`,
			`["INVALID_ARGUMENTS","city","missing property 'city'"]`},
		{"a misspelt tool suggests names", policy.Rules{}, builtin.CodeOptions{},
			`try { await tools.call("weather_forcast", {city: "x"}) } catch (e) { return [e.code, e.did_you_mean[0]] }`,
			`["UNKNOWN_TOOL","weather_forecast"]`},
		{"a missing name teaches the script's call", policy.Rules{}, builtin.CodeOptions{},
			`try { await tools.call("", {}) } catch (e) { return [e.code, e.correct_shape.arguments.code] }`,
			`["MISSING_TOOL_NAME","await tools.call(\"<tool name>\", {})"]`},
		{"mutations off", policy.Rules{}, builtin.CodeOptions{},
			`try { await tools.call("weather_send_alert", {text: "x"}) } catch (e) { return e.code }`, `"DENIED"`},
		{"agent confirmation", policy.Rules{}, builtin.CodeOptions{AllowMutations: true},
			`let c; try { await tools.call("weather_send_alert", {}) } catch (e) { c = e.code }; return [c, await tools.call("weather_send_alert", {}, {confirm: true})]`,
			`["CONFIRMATION_REQUIRED","sent"]`},
		{"no scripts in scripts", policy.Rules{}, builtin.CodeOptions{},
			`try { await tools.call("execute_javascript", {code: "1"}) } catch (e) { return e.code }`, `"DENIED"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newCodeHarness(t, facade.Code, tc.rules, builtin.Options{Code: tc.code})
			text, e := h.call("execute_javascript", map[string]any{"code": tc.js})
			if e != nil || !strings.Contains(text, `"result":`+tc.want) {
				t.Fatalf("got %s %v, want result %s", text, e, tc.want)
			}
		})
	}
}

// Under confirm: token a script cannot confirm its own call: the token of
// its CONFIRMATION_REQUIRED never reaches the script (no confirm_token, no
// retry), the run ends with the token in its envelope for the model, and
// the model's next script passes it.
func TestCodeModeTokenGoesToTheModel(t *testing.T) {
	h, audit := newCodeHarness(t, facade.Code, policy.Rules{Confirm: policy.ConfirmToken}, builtin.Options{Code: builtin.CodeOptions{AllowMutations: true}})
	text, e := h.call("execute_javascript", map[string]any{"code": `
		let seen;
		try { await tools.call("weather_send_alert", {text: "x"}) } catch (e) { seen = [e.code, e.confirm_token, e.retry] }
		// the script tries every way it could confirm itself
		for (const c of [true, "ct_forged"]) { try { await tools.call("weather_send_alert", {text: "x"}, {confirm: c}) } catch (e) {} }
		return seen`})
	if e == nil || e["code"] != "CONFIRMATION_REQUIRED" {
		t.Fatalf("first run: %s", text)
	}
	if !strings.Contains(fmt.Sprint(e["script_result"]), `["CONFIRMATION_REQUIRED",null,null]`) {
		t.Fatalf("the script saw more than the code: %v", e["script_result"])
	}
	confs, _ := e["confirmations"].([]any)
	if len(confs) == 0 {
		t.Fatalf("no confirmations for the model: %s", text)
	}
	first, _ := confs[0].(map[string]any)
	tok, _ := first["confirm_token"].(string)
	if tok == "" || first["tool"] != "weather_send_alert" {
		t.Fatalf("confirmation %v", first)
	}
	for _, r := range auditRecords(t, audit) {
		if r.Tool == "weather_send_alert" && r.Outcome == "ok" {
			t.Fatalf("the script confirmed its own call: %+v", r)
		}
	}
	text, e = h.call("execute_javascript", map[string]any{"code": `return await tools.call("weather_send_alert", {text: "x"}, {confirm: ` + strconv.Quote(tok) + `})`})
	if e != nil || !strings.Contains(text, `"result":"sent"`) {
		t.Fatalf("the model's run with the token: %s %v", text, e)
	}
}

// Scripts reach tools in every mode, not only code mode: here through
// progressive mode's builtin call.
func TestScriptToolsInProgressiveMode(t *testing.T) {
	h, audit := newCodeHarness(t, facade.Progressive, policy.Rules{}, builtin.Options{})
	text, e := h.call("agent_tools_builtin_call", map[string]any{"toolName": "execute_javascript",
		"arguments": map[string]any{"code": `const r = await tools.call("weather_forecast", {city: "Oslo"}); r.sky`}})
	if e != nil || !strings.Contains(text, `"result":"clear"`) {
		t.Fatalf("%s %v", text, e)
	}
	recs := auditRecords(t, audit)
	if len(recs) != 2 || recs[0].Parent != recs[1].RequestID {
		t.Fatalf("audit %+v", recs)
	}
}

func TestCodeModeSearchAndHelp(t *testing.T) {
	h, _ := newCodeHarness(t, facade.Code, policy.Rules{}, builtin.Options{})
	text, e := h.call("agent_tools_search", map[string]any{"query": "weather forecast for a city"})
	if e != nil || !strings.Contains(text, `"signature":"weather_forecast(args: {city: string, days?: number}): Promise<any>"`) ||
		strings.Contains(text, `"inputSchema"`) || !strings.Contains(text, "execute_javascript") {
		t.Fatalf("search: %s %v", text, e)
	}
	text, e = h.call("agent_tools_help", map[string]any{})
	if e != nil || !strings.Contains(text, "declare const tools") {
		t.Fatalf("help: %s %v", text, e)
	}
}

// A runaway allocation is stopped with a clear error, and the server keeps
// serving (the next script runs).
func TestCodeModeRunawayAllocation(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 64 MiB on purpose")
	}
	if ok, why := jsrun.Isolation(); !ok {
		t.Skip(why)
	}
	h, _ := newCodeHarness(t, facade.Code, policy.Rules{}, builtin.Options{JavaScript: builtin.JavaScriptLimits{Memory: 64 << 20}})
	text, e := h.call("execute_javascript", map[string]any{"code": `const a = []; while (true) a.push(new Array(1e6).fill(0))`})
	js, _ := e["js_error"].(map[string]any)
	if e == nil || js["kind"] != "memory" || !strings.Contains(text, "the script used more than 64 MiB") {
		t.Fatalf("runaway: %s", text)
	}
	text, e = h.call("execute_javascript", map[string]any{"code": `const r = await tools.call("weather_forecast", {city: "Rome"}); r.temp`})
	if e != nil || !strings.Contains(text, `"result":21`) {
		t.Fatalf("after the runaway: %s %v", text, e)
	}
}

// In human mode a mutating call inside a script asks the person, as a
// direct call would; a refusal throws inside the script.
func TestCodeModeHumanConfirmation(t *testing.T) {
	for _, approve := range []bool{true, false} {
		asked := 0
		opts := &sdk.ClientOptions{ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked++ // one request at a time here
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve}}, nil
		}}
		h, audit := newCodeHarness(t, facade.Code, policy.Rules{Confirm: policy.ConfirmHuman}, builtin.Options{Code: builtin.CodeOptions{AllowMutations: true}}, opts)
		text, e := h.call("execute_javascript", map[string]any{"code": `try { return await tools.call("weather_send_alert", {text: "storm"}) } catch (e) { return e.code }`})
		want := `"result":"sent"`
		if !approve {
			want = `"result":"DENIED"`
		}
		if e != nil || asked != 1 || !strings.Contains(text, want) {
			t.Fatalf("approve=%v: asked %d, %s %v", approve, asked, text, e)
		}
		recs := auditRecords(t, audit)
		if len(recs) != 2 || recs[0].Tool != "weather_send_alert" || recs[0].Parent != recs[1].RequestID {
			t.Fatalf("audit %+v", recs)
		}
	}
}
