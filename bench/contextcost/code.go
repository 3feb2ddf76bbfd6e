package main

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/builtin"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// codeRow is the mean tokens a model reads and writes to do one multi-tool
// task (find each needed tool, call it, pass results on) in each mode.
type codeRow struct {
	Catalog     string  `json:"catalog"`
	Tasks       int     `json:"tasks"`
	MeanNeeds   float64 `json:"mean_tools_per_task"`
	Progressive float64 `json:"progressive_tokens"`
	Search      float64 `json:"search_tokens"`
	Code        float64 `json:"code_tokens"`
	// CodeSearch: code mode when the model finds tools with
	// agent_tools_search (full hits) rather than from a script.
	CodeSearch float64 `json:"code_with_search_tool_tokens"`
	// ListTokens: tools/list of progressive, search and code mode.
	ListTokens [3]int  `json:"list_tokens"`
	CodeVsSrch float64 `json:"code_vs_search"`
}

// resultRecords shapes every fake tool result like a typical API answer: a
// page of records (about 700 tokens). Intermediate results are what code
// mode keeps out of the model's context, so the rows depend on this size;
// it is the same for every mode.
const resultRecords = 10

func fakeResult(tool string) string {
	recs := make([]map[string]any, resultRecords)
	for i := range recs {
		recs[i] = map[string]any{"id": fmt.Sprintf("%s-%04d", tool, i), "name": fmt.Sprintf("record %d of %s", i, tool),
			"status": []string{"open", "closed", "pending"}[i%3], "updated": "2026-11-0" + strconv.Itoa(1+i%9) + "T10:00:00Z",
			"owner": "team-" + strconv.Itoa(i%4), "score": float64(i) * 1.5}
	}
	b, _ := json.Marshal(map[string]any{"items": recs, "total": resultRecords, "next_cursor": nil})
	return string(b)
}

// multiTasks are a data set's tasks that need two tools or more. Azure's
// queries each need one tool: consecutive pairs make its two-tool tasks.
func multiTasks(qs []datasetQuery) []datasetQuery {
	var out []datasetQuery
	for _, q := range qs {
		if len(q.Needs) >= 2 {
			out = append(out, q)
		}
	}
	if len(out) > 0 {
		return out
	}
	for i := 0; i+1 < len(qs); i += 2 {
		out = append(out, datasetQuery{Query: qs[i].Query + " Then: " + qs[i+1].Query, Needs: append(append([][]string{}, qs[i].Needs...), qs[i+1].Needs...)})
	}
	return out
}

// exampleArgs are arguments that fill a schema's required properties, so
// the calls pass validation as a model's would.
func exampleArgs(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	out := map[string]any{}
	for _, k := range s.Required {
		p := s.Properties[k]
		if len(p.Enum) > 0 {
			out[k] = p.Enum[0]
			continue
		}
		t, _ := p.Type.(string)
		if ts, ok := p.Type.([]any); ok && len(ts) > 0 {
			t, _ = ts[0].(string)
		}
		switch t {
		case "integer", "number":
			out[k] = 1
		case "boolean":
			out[k] = true
		case "array":
			out[k] = []any{}
		case "object":
			out[k] = map[string]any{}
		default:
			out[k] = "example"
		}
	}
	return out
}

// stepQuery is what an agent searches for one step: the capability, in the
// words of the tool's description's first clause (as the list rows do).
func stepQuery(t catalog.Tool) string {
	q := t.Description
	if i := strings.IndexAny(q, ".;\n"); i > 0 {
		q = q[:i]
	}
	if len(q) > 120 {
		q = q[:120]
	}
	if strings.TrimSpace(q) == "" {
		q = strings.ReplaceAll(t.Name, "_", " ")
	}
	return q
}

// measureCode runs every multi-tool task as an agent would in progressive,
// search and code mode, counting every tools/list page, request and result.
//
//   - progressive: list, help, then per step discover (its provider) and call;
//   - search: list, then per step search and call;
//   - code: list, per step one code-mode search (signatures, no schemas), then
//     one execute_javascript script that calls every step's tool, passes each
//     result on to the next call, and returns a short summary of each.
func measureCode(name string, provs []*providertest.Fake, ids map[string]string, qs []datasetQuery, count func([]byte) int) codeRow {
	reg := registry.New(nil)
	if err := reg.Add(builtin.New(builtin.Options{Code: builtin.CodeOptions{MaxCalls: 100}})); err != nil {
		fail(err)
	}
	for _, p := range provs {
		p.Func = func(_ context.Context, t catalog.Tool, _ json.RawMessage) (*provider.Result, error) {
			return &provider.Result{Text: fakeResult(t.Name)}, nil
		}
		if err := reg.Add(p); err != nil {
			fail(err)
		}
	}
	reg.Refresh(context.Background())
	byID := map[string]catalog.Tool{}
	for _, t := range reg.Tools("") {
		if id, ok := ids[t.Provider+"\x00"+t.Name]; ok {
			byID[id] = t
		}
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{}, Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Minute, MaxResultChars: 30000}})
	modes := []facade.Mode{facade.Progressive, facade.Search, facade.Code}
	sums := make([]float64, len(modes))
	tasks, needs := 0, 0
	codeSearch := 0.0
	conns := map[facade.Mode]func(){}
	clients := map[facade.Mode]*clientAndList{}
	for _, m := range modes {
		fac := facade.New(reg, run, facade.Options{Mode: m})
		fac.Sync()
		cs, closeAll := connect(fac)
		conns[m] = closeAll
		clients[m] = &clientAndList{cs: cs, list: listTokens(cs, count)}
	}
	defer func() {
		for _, c := range conns {
			c()
		}
	}()
	for _, q := range multiTasks(qs) {
		var steps []catalog.Tool
		for _, need := range q.Needs {
			for _, id := range need {
				if t, ok := byID[id]; ok {
					steps = append(steps, t)
					break
				}
			}
		}
		if len(steps) < 2 {
			continue // a need the registry did not load
		}
		tasks++
		needs += len(steps)
		for i, m := range modes {
			c := clients[m]
			tok := c.list
			switch m {
			case facade.Progressive:
				if grouped(c.cs) { // main.go: one discover and one call for all providers
					for _, t := range steps {
						tok += exchange(c.cs, "agent_tools_discover", map[string]any{"query": stepQuery(t)}, count)
						tok += exchange(c.cs, "agent_tools_call", map[string]any{"tool": t.Canonical, "arguments": exampleArgs(t.InputSchema)}, count)
					}
					break
				}
				tok += exchange(c.cs, "agent_tools_help", map[string]any{}, count)
				for _, t := range steps {
					tok += exchange(c.cs, "agent_tools_"+t.Provider+"_discover", map[string]any{"query": stepQuery(t)}, count)
					tok += exchange(c.cs, "agent_tools_"+t.Provider+"_call", map[string]any{"toolName": t.Name, "arguments": exampleArgs(t.InputSchema)}, count)
				}
			case facade.Search:
				for _, t := range steps {
					tok += exchange(c.cs, "agent_tools_search", map[string]any{"query": stepQuery(t)}, count)
					tok += exchange(c.cs, "agent_tools_call", map[string]any{"tool": t.Canonical, "arguments": exampleArgs(t.InputSchema)}, count)
				}
			case facade.Code:
				// One script finds (it returns only the top signatures of
				// each step's search), one calls and combines.
				tok += exchange(c.cs, "execute_javascript", map[string]any{"code": findScript(steps)}, count)
				tok += exchange(c.cs, "execute_javascript", map[string]any{"code": script(steps)}, count)
				// The variant that searches with agent_tools_search instead.
				alt := c.list
				for _, t := range steps {
					alt += exchange(c.cs, "agent_tools_search", map[string]any{"query": stepQuery(t)}, count)
				}
				alt += exchange(c.cs, "execute_javascript", map[string]any{"code": script(steps)}, count)
				codeSearch += float64(alt)
			}
			sums[i] += float64(tok)
		}
	}
	if tasks == 0 {
		return codeRow{Catalog: name}
	}
	r := codeRow{Catalog: name, Tasks: tasks, MeanNeeds: float64(needs) / float64(tasks),
		Progressive: sums[0] / float64(tasks), Search: sums[1] / float64(tasks), Code: sums[2] / float64(tasks), CodeSearch: codeSearch / float64(tasks),
		ListTokens: [3]int{clients[facade.Progressive].list, clients[facade.Search].list, clients[facade.Code].list}}
	r.CodeVsSrch = r.Code / r.Search
	return r
}

// findScript is the script that finds: each step's top three signatures.
func findScript(steps []catalog.Tool) string {
	qs := make([]string, len(steps))
	for i, t := range steps {
		qs[i] = stepQuery(t)
	}
	b, _ := json.Marshal(qs)
	return "return " + string(b) + ".map(q => tools.search(q, {limit: 3}).map(t => t.signature));"
}

// script is the one script a model writes for a task: each call gets the
// previous result passed on (prev), every failure is caught, and only a
// short summary of each result comes back.
func script(steps []catalog.Tool) string {
	var b strings.Builder
	b.WriteString("const out = []; let prev = null;\n")
	for _, t := range steps {
		args, _ := json.Marshal(exampleArgs(t.InputSchema))
		fmt.Fprintf(&b, "prev = await tools.call(%q, %s).catch(e => ({error: e.code}));\nout.push(prev.items ? {first: prev.items[0].id, total: prev.total} : prev);\n", t.Canonical, args)
	}
	b.WriteString("return out;")
	return b.String()
}

type clientAndList struct {
	cs   *sdk.ClientSession
	list int
}

// listTokens reads every page of tools/list, as a client puts it in context.
func listTokens(cs *sdk.ClientSession, count func([]byte) int) int {
	n := 0
	params := &sdk.ListToolsParams{}
	for {
		page, err := cs.ListTools(context.Background(), params)
		if err != nil {
			fail(err)
		}
		b, _ := json.Marshal(page)
		n += count(b)
		if page.NextCursor == "" {
			return n
		}
		params.Cursor = page.NextCursor
	}
}

// printCode writes the code-mode table.
func printCode(w io.Writer, rows []codeRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nMulti-tool tasks (find + call + pass a result on), mean tokens per task:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "catalog\ttasks\ttools/task\tprogressive\tsearch\tcode\tcode vs search\tcode (agent_tools_search)\tvs search\tlist tokens p/s/c\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.1f%%\t%.0f\t%.1f%%\t%d/%d/%d\t\n", r.Catalog, r.Tasks, r.MeanNeeds, r.Progressive, r.Search, r.Code, 100*r.CodeVsSrch,
			r.CodeSearch, 100*r.CodeSearch/r.Search, r.ListTokens[0], r.ListTokens[1], r.ListTokens[2])
	}
	tw.Flush()
}

// overhead is what one tool call costs from a script against a direct call:
// wall time through the in-memory MCP transport and the tokens the model
// reads and writes for it.
type overhead struct {
	DirectMicros, ScriptMicros float64
	DirectTokens, ScriptTokens float64
}

// measureOverhead makes n calls of one read-only tool directly (search
// mode's agent_tools_call) and from one script, a loop of awaited calls.
func measureOverhead(n int, count func([]byte) int) overhead {
	p := providertest.New(catalog.ProviderInfo{ID: "svc", Description: "A service"},
		providertest.Tool("get_item", "Get an item by id.", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`, true))
	p.Func = func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
		return &provider.Result{Text: `{"id":"42","name":"item 42"}`}, nil
	}
	reg := registry.New(nil)
	for _, pr := range []provider.Provider{builtin.New(builtin.Options{Code: builtin.CodeOptions{MaxCalls: n}}), p} {
		if err := reg.Add(pr); err != nil {
			fail(err)
		}
	}
	reg.Refresh(context.Background())
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{}})
	var o overhead
	{
		fac := facade.New(reg, run, facade.Options{Mode: facade.Search})
		fac.Sync()
		cs, closeAll := connect(fac)
		args := map[string]any{"tool": "svc_get_item", "arguments": map[string]any{"id": "42"}}
		o.DirectTokens = float64(exchange(cs, "agent_tools_call", args, count)) // also warms up
		start := time.Now()
		for range n { // timed without the tokenizer
			if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "agent_tools_call", Arguments: args}); err != nil {
				fail(err)
			}
		}
		o.DirectMicros = float64(time.Since(start).Microseconds()) / float64(n)
		closeAll()
	}
	{
		fac := facade.New(reg, run, facade.Options{Mode: facade.Code})
		fac.Sync()
		cs, closeAll := connect(fac)
		one := `const r = await tools.call("svc_get_item", {id: "42"}); return r.name`
		loop := fmt.Sprintf(`let r; for (let i = 0; i < %d; i++) r = await tools.call("svc_get_item", {id: "42"}); return r.name`, n)
		base := exchange(cs, "execute_javascript", map[string]any{"code": `return "item 42"`}, count)
		timed := func(code string) time.Duration {
			start := time.Now()
			if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "execute_javascript", Arguments: map[string]any{"code": code}}); err != nil {
				fail(err)
			}
			return time.Since(start)
		}
		empty := timed(`return "item 42"`)
		o.ScriptMicros = float64((timed(loop) - empty).Microseconds()) / float64(n)
		// A call written in a script: the tokens one call adds to it.
		o.ScriptTokens = float64(exchange(cs, "execute_javascript", map[string]any{"code": one}, count) - base)
		closeAll()
	}
	return o
}

func printOverhead(w io.Writer, o overhead) {
	fmt.Fprintf(w, "\nOne tool call, direct (agent_tools_call) vs from a script: %.0f µs vs %.0f µs of wall time; %.0f vs %.0f tokens the model reads and writes.\n",
		o.DirectMicros, o.ScriptMicros, o.DirectTokens, o.ScriptTokens)
}
