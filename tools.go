package agenttools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/native"
	"github.com/agent-tools/agent-tools/internal/runtime"
)

// PluginOptions describe a plugin: a namespace of tools the program adds
// one by one, like a provider entry of agent-tools.yaml.
type PluginOptions struct {
	// Description is one line a model reads to pick the plugin.
	Description string
	// DiscoverHint says what to search this plugin for.
	DiscoverHint string
	// ReadOnly names actions that never need confirmation (like the
	// config's readonly:); [Tool.ReadOnly] does the same per tool.
	ReadOnly []string
	// NoConfirm is requireConfirm: false: no tool of this plugin asks for
	// confirmation. By default every tool that is not read-only does.
	NoConfirm bool
	// Disabled starts the plugin disabled; SetEnabled turns it on.
	Disabled bool
	// Timeout bounds each call (0: the runtime's default, 60s).
	Timeout time.Duration
}

// AddPlugin declares a plugin before its tools are added (adding a tool in
// an undeclared namespace declares it with the zero PluginOptions). The
// namespace is the plugin id: dashes become underscores, the rest must be
// snake_case.
func (r *Runtime) AddPlugin(namespace string, o PluginOptions) error {
	return r.rt.AddPlugin(namespace, runtime.PluginOptions(o))
}

// Tool describes a tool: for [Runtime.AddTool] and [AddTool], and as a
// [Provider] lists its tools. Its MCP name is "{Namespace}_{Action}", e.g.
// booking_create.
type Tool struct {
	// Namespace is the plugin id (dashes become underscores). A Provider's
	// tools leave it empty: their namespace is the provider's ID.
	Namespace string
	// Action is the snake_case verb: "create", "check_availability".
	Action string
	// Description is what the model reads: what the tool does and when to use it.
	Description string
	// InputSchema is the JSON Schema of the arguments, an object schema
	// (nil: no arguments; [AddTool] infers it from its In type).
	InputSchema *jsonschema.Schema
	// OutputSchema optionally describes the structured content of the
	// result, an object schema ([AddTool] infers it from an Out struct).
	OutputSchema *jsonschema.Schema
	// ReadOnly tools change nothing and never need confirmation.
	ReadOnly bool
	// Timeout bounds each call (0: the plugin's or provider's, else the runtime's).
	Timeout time.Duration
}

// CallInfo is what a handler knows about the call besides its arguments.
type CallInfo struct {
	// Tool is the canonical name called, e.g. "booking_create".
	Tool string
	// Action is the tool's name within its plugin or provider, e.g. "create".
	Action string
	// Session identifies the MCP session or in-process Session.
	Session string
	// Client is the client's name from initialize (or the Session's).
	Client string
	// User is the authenticated caller over HTTP (the transport's identity,
	// never the token), or the Session's User in-process; "" when unknown.
	User string

	ctx context.Context
}

// Progress reports real progress of a long call (done and total in any
// unit, total 0 if unknown) to a client that asked for it.
func (c *CallInfo) Progress(done, total float64, message string) {
	provider.ReportProgress(c.ctx, done, total, message)
}

// ToolHandler runs one call of a tool added with [Runtime.AddTool]. args
// has been validated against the tool's input schema. The result is sent
// as text when it is a string or []byte, else as JSON (and as
// structuredContent when it is an object). A returned *ToolError reaches
// the agent with its code and hint; any other error becomes a
// BACKEND_ERROR result the agent can read: wrap the cause so it says what
// to do next.
type ToolHandler func(ctx context.Context, call *CallInfo, args json.RawMessage) (any, error)

// ToolHandlerFor runs one call of a tool added with [AddTool]: in holds the
// decoded arguments, out is returned as JSON text and structuredContent.
// Errors are as for [ToolHandler].
type ToolHandlerFor[In, Out any] func(ctx context.Context, call *CallInfo, in In) (out Out, err error)

// AddTool adds the tool {t.Namespace}_{t.Action} with its handler. A bad
// or duplicate name, or a schema that is not an object, is an error now,
// not at the first call. Tools may be added after Start in a plugin that
// exists.
func (r *Runtime) AddTool(t *Tool, h ToolHandler) error {
	if err := checkAdd(t, h == nil); err != nil {
		return err
	}
	tt := *t // later changes to the caller's Tool change nothing
	nt, err := nativeTool(&tt, func(ctx context.Context, args json.RawMessage) (*provider.Result, error) {
		v, err := h(ctx, callInfo(ctx, tt.Namespace, tt.Action), args)
		if err != nil {
			return nil, err
		}
		return toResult(v)
	})
	if err != nil {
		return err
	}
	return r.rt.AddTool(tt.Namespace, nt)
}

// AddTool adds a typed tool: unless t sets them, the input and output
// schemas are inferred from In and Out (struct fields with json and
// jsonschema tags, as the official go-sdk's mcp.AddTool does), arguments
// are decoded into In, and Out is returned as JSON text and
// structuredContent. In must be a struct (tool arguments are a JSON object).
func AddTool[In, Out any](r *Runtime, t *Tool, h ToolHandlerFor[In, Out]) error {
	if err := checkAdd(t, h == nil); err != nil {
		return err
	}
	tt := *t // the caller's Tool is not filled in
	if tt.InputSchema == nil {
		in, err := jsonschema.For[In](nil)
		if err != nil {
			return fmt.Errorf("agenttools: %s_%s: input schema: %w", t.Namespace, t.Action, err)
		}
		tt.InputSchema = in
	}
	if tt.OutputSchema == nil {
		if out, err := jsonschema.For[Out](nil); err == nil && out.Type == "object" {
			tt.OutputSchema = out // only object outputs can be structuredContent
		}
	}
	return r.AddTool(&tt, func(ctx context.Context, call *CallInfo, args json.RawMessage) (any, error) {
		var v In
		if len(args) > 0 && string(args) != "null" {
			if err := json.Unmarshal(args, &v); err != nil {
				return nil, fmt.Errorf("decoding the arguments: %w", err)
			}
		}
		return h(ctx, call, v)
	})
}

func checkAdd(t *Tool, nilHandler bool) error {
	switch {
	case t == nil:
		return errors.New("agenttools: AddTool: nil tool")
	case nilHandler:
		return fmt.Errorf("agenttools: AddTool %s_%s: nil handler", t.Namespace, t.Action)
	}
	return nil
}

// nativeTool is t as the runtime's in-process provider runs it, a
// *ToolError that h returns kept with its code.
func nativeTool(t *Tool, h native.Handler) (native.Tool, error) {
	in, err := schemaJSON(t.InputSchema)
	if err != nil {
		return native.Tool{}, fmt.Errorf("agenttools: %s_%s: input schema: %w", t.Namespace, t.Action, err)
	}
	out, err := schemaJSON(t.OutputSchema)
	if err != nil {
		return native.Tool{}, fmt.Errorf("agenttools: %s_%s: output schema: %w", t.Namespace, t.Action, err)
	}
	return nativeToolOf(t, in, out, h), nil
}

// nativeToolOf is nativeTool with the schemas already encoded.
func nativeToolOf(t *Tool, in, out json.RawMessage, h native.Handler) native.Tool {
	return native.Tool{Name: t.Action, Description: t.Description, InputSchema: in, OutputSchema: out,
		ReadOnly: t.ReadOnly, Timeout: t.Timeout,
		Handler: func(ctx context.Context, args json.RawMessage) (*provider.Result, error) {
			res, err := h(ctx, args)
			if err != nil {
				return nil, handlerError(err)
			}
			return res, nil
		}}
}

func schemaJSON(s *jsonschema.Schema) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	return jsonscan.Marshal(s)
}

// handlerError keeps a handler's *ToolError as the envelope the agent reads.
func handlerError(err error) error {
	var te *ToolError
	if errors.As(err, &te) {
		return te.internal()
	}
	return err
}

func callInfo(ctx context.Context, namespace, action string) *CallInfo {
	c := provider.CallerFrom(ctx)
	ns, _ := native.Normalize(namespace)
	return &CallInfo{Tool: ns + "_" + action, Action: action, Session: c.Session, Client: c.Client, User: c.User, ctx: ctx}
}

// toResult renders a handler's value for the model.
func toResult(v any) (*provider.Result, error) {
	switch x := v.(type) {
	case nil:
		return &provider.Result{}, nil
	case string:
		return &provider.Result{Text: x}, nil
	case []byte:
		return &provider.Result{Text: string(x)}, nil
	case *Result: // a handler answering with content blocks (an image, a resource)
		if x == nil {
			return &provider.Result{}, nil
		}
		return &provider.Result{Text: x.Text, Structured: x.Structured, IsError: x.IsError, Content: x.Content}, nil
	}
	b, err := jsonscan.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	res := &provider.Result{Text: string(b)}
	if len(b) > 0 && b[0] == '{' {
		res.Structured = json.RawMessage(b)
	}
	return res, nil
}
