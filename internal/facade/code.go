package facade

import (
	"context"
	"crypto/rand"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strconv"
	"strings"
	"sync"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/codemode"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Code mode publishes help, search and execute_javascript: the model finds
// tools and calls them from one script, and reads only what the script
// returns (docs/modes.md, "Code mode").
const Code Mode = "code"

// codeTool is the name code mode publishes the interpreter under (the
// built-in's own, host-local name).
const codeTool = codemode.Tool

// codeAPI declares the `tools` object a script sees, for help.
const codeAPI = `declare const tools: {
  search(query: string, opts?: {limit?: number}): {name: string, description: string, signature: string, readOnly: boolean}[];
  describe(name: string): {name: string, description: string, signature: string, readOnly: boolean, inputSchema: object};
  call(name: string, args?: object, opts?: {confirm?: boolean | string}): Promise<any>; // throws Error{code, message, hint, correct_shape}
  maxCalls: number;
};`

func (f *Facade) codeSearchDef() toolDef {
	d := f.searchDef()
	d.tool.Description = "Search every provider's tools by the capability you need (\"weather forecast for a city\"), one query per step. " +
		"Returns the best matches with their exact names and TypeScript-style signatures; then write one " + codeTool + " script that calls them with `await tools.call(name, args)`. " +
		"Scripts can also search themselves (tools.search), so for a task of several steps search from the script."
	d.handler = func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, m, e := parseDiscover(req.Params.Arguments, searchTool, "provider")
		var prov string
		if e == nil {
			e = field(m, "provider", searchTool, &prov)
		}
		if e == nil && a.Query == "" {
			e = toolerr.New(toolerr.InvalidArguments, "Describe what you want to do in `query`, e.g. {\"query\": \"list open pull requests\"}.",
				"%s needs a query", searchTool)
		}
		if e != nil {
			return errorResult(e), nil
		}
		f.cat.Refresh(ctx)
		o := indexOptions(prov)
		o.Kind = "tool" // skills run through run_skill, which code mode does not publish
		return jsonResult(f.rank(f.grantOf(req.Extra), a, o, codeTool)), nil
	}
	return d
}

func (f *Facade) codeRunDef() toolDef {
	var schema any = objectSchema(map[string]any{"code": prop("string", "JavaScript")}, []string{"code"})
	if t, ok := f.cat.Lookup(codeTool); ok {
		schema = t.InputSchema
	}
	// Short on purpose: code mode's list is all a model reads up front.
	desc := "Run JavaScript that finds tools, calls them and combines their results. " +
		codemode.API + " Example: `const [t] = tools.search(\"weather forecast\", {limit: 1}); const r = await tools.call(t.name, {city: \"Paris\"}); return r.temperature`. " +
		"Top-level await and return work; no require, fetch or timers; a script runs up to " + f.codeTimeout() + " unless timeout_ms says less. Calls pass the same policy, validation and confirmation as direct ones."
	return toolDef{
		tool: &sdk.Tool{
			Name: codeTool, Description: desc, InputSchema: schema,
			Annotations: &sdk.ToolAnnotations{Title: "Run a script that calls tools", OpenWorldHint: boolPtr(true)},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			// The interpreter is part of every view of code mode (ModeTool):
			// a profile limits what its scripts may call, not the mode itself.
			preq := &pipeline.Request{Via: codeTool, Tool: codeTool, Args: req.Params.Arguments, Shape: codeShape{}, ModeTool: true}
			return f.call(ctx, req, preq), nil
		},
	}
}

// codeShape renders a call as a script would make it.
type codeShape struct{}

func (codeShape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	call := "await tools.call(" + strconv.Quote(tool) + ", " + string(rawOrEmpty(args))
	if confirm != nil {
		c, _ := json.Marshal(confirm)
		call += ", {confirm: " + string(c) + "}"
	}
	return map[string]any{"tool": codeTool, "arguments": map[string]any{"code": call + ")"}}
}

// scriptTarget reports whether req runs execute_javascript.
func scriptTarget(req *pipeline.Request) bool {
	return !req.Skill && req.Malformed == nil && req.Tool == codemode.Tool && (req.Provider == "" || req.Provider == codemode.Provider)
}

// lendScriptHost lends an execute_javascript call the facade's tools, as
// one of the call's values (provider.Values.Script): its script's calls run
// back through the pipeline under the caller's session, audited with this
// call's request id as their parent.
func (f *Facade) lendScriptHost(mreq *sdk.CallToolRequest, req *pipeline.Request) {
	if !scriptTarget(req) {
		return
	}
	if req.RequestID == "" {
		req.RequestID = rand.Text()[:16]
	}
	req.Values.Script = &scriptHost{f: f, mreq: mreq, parent: req}
}

type scriptHost struct {
	f      *Facade
	mreq   *sdk.CallToolRequest
	parent *pipeline.Request

	mu      sync.Mutex
	pending []pendingConfirm // tokens the script's calls drew: the model's, not the script's
}

// pendingConfirm is a confirmation a script's call needs, with the token
// that only the model can use (in its next script).
type pendingConfirm struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Token     string          `json:"confirm_token"`
}

// withPending ends a script run that drew confirmation tokens with the
// CONFIRMATION_REQUIRED they belong to: the tokens go to the model, which
// decides (with the user) and runs a script that passes them.
func (f *Facade) withPending(req *pipeline.Request, resp *pipeline.Response) *pipeline.Response {
	h, ok := req.Values.Script.(*scriptHost)
	if !ok {
		return resp
	}
	h.mu.Lock()
	pending := h.pending
	h.mu.Unlock()
	if len(pending) == 0 {
		return resp
	}
	e := toolerr.New(toolerr.ConfirmationRequired,
		"The script called tools that change state and need confirmation. If the user wants these changes, run a script that makes exactly these calls with `{confirm: <confirm_token>}` as the third argument of tools.call; otherwise do not.",
		"%d call(s) of the script need confirmation", len(pending)).With("confirmations", pending)
	if resp.Result != nil {
		e.With("script_result", resp.Result.Text)
	} else if resp.Err != nil {
		e.With("script_error", resp.Err.Body()["error"])
	}
	return &pipeline.Response{Err: e, Decision: "confirmation_required", Duration: resp.Duration}
}

var _ provider.ScriptHost = (*scriptHost)(nil)

// callable is a tool a script may see: visible to this caller (global
// rules, the profile, the caller's per-identity rules), and not the
// interpreter itself (a script does not start scripts).
func (h *scriptHost) callable(t catalog.Tool) bool {
	var x *sdk.RequestExtra
	if h.mreq != nil {
		x = h.mreq.Extra
	}
	return t.Canonical != codemode.Tool && h.f.visibleTo(h.f.grantOf(x), t.Provider, t.Canonical)
}

func (h *scriptHost) Search(_ context.Context, query string, limit int) []catalog.Tool {
	hits := h.f.cat.Search(query, index.Options{Kind: "tool", Limit: limit + 1})
	out := make([]catalog.Tool, 0, limit)
	for _, hit := range hits {
		if t, ok := h.f.cat.Lookup(hit.ID); ok && h.callable(t) && len(out) < limit {
			out = append(out, t)
		}
	}
	return out
}

func (h *scriptHost) Describe(_ context.Context, name string) (catalog.Tool, bool) {
	t, ok := h.f.cat.Lookup(name)
	if !ok || !h.callable(t) {
		return catalog.Tool{}, false
	}
	return t, true
}

func (h *scriptHost) Call(ctx context.Context, name string, args json.RawMessage, confirm any) (*provider.Result, error) {
	if strings.TrimSpace(name) == codemode.Tool {
		return nil, toolerr.New(toolerr.Denied, "Do the work in this script instead of starting another.", "a script cannot run %s", codemode.Tool)
	}
	req := &pipeline.Request{Via: codeTool, Parent: h.parent.RequestID, Tool: name, Args: args, Shape: codeShape{}}
	if e := setConfirm(req, confirm, "tools.call", h.f.tokenMode()); e != nil {
		return nil, e
	}
	h.f.bindSession(h.mreq, req)
	// The script's door: the gate decides on the tool the pipeline
	// resolves (read-only unless code.allowMutations), and a confirmation
	// token goes to the model, not back to the script (Run).
	req.Door, req.Run = policy.DoorScript, h.parent.RequestID
	req.ReadOnly = h.f.opts.ScriptsMayMutate == nil || !h.f.opts.ScriptsMayMutate()
	resp := h.f.run(ctx, req)
	if resp.Token != "" {
		h.mu.Lock()
		h.pending = append(h.pending, pendingConfirm{Tool: req.Resolved.Canonical, Arguments: args, Token: resp.Token})
		h.mu.Unlock()
	}
	if resp.Err != nil {
		return nil, resp.Err
	}
	return resp.Result, nil
}

// codeTimeout is how long a script with tools may run, as the interpreter's
// catalog entry says (its deadline less the grace).
func (f *Facade) codeTimeout() string {
	if t, ok := f.cat.Lookup(codeTool); ok && t.Timeout > 0 {
		return (t.Timeout - 2*jsrun.Grace).String()
	}
	return codemode.DefaultTimeout.String()
}
