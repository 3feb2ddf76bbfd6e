package agenttools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/native"
)

// ProviderOptions describe a group of tools (a service plugin), like a
// provider entry of agent-tools.yaml.
type ProviderOptions struct {
	// Description is one line a model reads to pick the provider.
	Description string
	// DiscoverHint says what to search this provider for.
	DiscoverHint string
	// ReadOnly names actions that never need confirmation (like the
	// config's readonly:); [Tool.ReadOnly] does the same per tool.
	ReadOnly []string
	// NoConfirm is requireConfirm: false: no tool of this provider asks for
	// confirmation. By default every tool that is not read-only does.
	NoConfirm bool
	// Disabled starts the provider disabled; SetEnabled turns it on.
	Disabled bool
	// Timeout bounds each call (0: the runtime's default, 60s).
	Timeout time.Duration
}

// AddProvider declares the provider of a namespace before its tools are
// registered (registering a tool in an undeclared namespace declares it
// with the zero ProviderOptions). The namespace is the plugin id: dashes
// become underscores, the rest must be snake_case.
func (r *Runtime) AddProvider(namespace string, o ProviderOptions) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ns, err := native.Normalize(namespace)
	if err != nil {
		return err
	}
	if _, dup := r.groups[ns]; dup {
		return fmt.Errorf("agenttools: provider %q is already declared (declare it before registering its tools)", ns)
	}
	_, err = r.groupLocked(ns, o)
	return err
}

func (r *Runtime) groupLocked(ns string, o ProviderOptions) (*group, error) {
	if g, ok := r.groups[ns]; ok {
		return g, nil
	}
	if r.a != nil {
		return nil, fmt.Errorf("agenttools: provider %q must be declared before Start", ns)
	}
	desc := o.Description
	if desc == "" {
		desc = "Tools of " + ns + "."
	}
	p, err := native.New(catalog.ProviderInfo{
		ID: ns, Kind: "native", Description: desc, DiscoverHint: o.DiscoverHint,
		RequireConfirm: !o.NoConfirm, Timeout: o.Timeout,
	})
	if err != nil {
		return nil, err
	}
	g := &group{p: p, opts: o}
	r.groups[ns] = g
	r.order = append(r.order, ns)
	return g, nil
}

// Tool describes a tool for [AddTool]. Its MCP name is
// "{Namespace}_{Action}" (seed 001), e.g. booking_create.
type Tool struct {
	// Namespace is the provider (plugin) id; dashes become underscores.
	Namespace string
	// Action is the snake_case verb: "create", "check_availability".
	Action string
	// Description is what the model reads: what the tool does and when to use it.
	Description string
	// ReadOnly tools change nothing and never need confirmation.
	ReadOnly bool
	// Timeout bounds each call (0: the provider's, else the runtime's).
	Timeout time.Duration
}

// CallInfo is what a handler knows about the call besides its arguments.
type CallInfo struct {
	// Tool is the canonical name called, e.g. "booking_create".
	Tool string
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

// ToolHandler runs one call of a tool registered with RegisterTool. args
// has been validated against the tool's input schema. The result is sent
// as text when it is a string or []byte, else as JSON (and as
// structuredContent when it is an object). A returned error becomes a
// BACKEND_ERROR result the agent can read; wrap the cause so it says what
// to do next.
type ToolHandler func(ctx context.Context, call *CallInfo, args json.RawMessage) (any, error)

// RegisterTool registers namespace_action with a JSON Schema for its
// arguments (it must be an object schema; nil means no arguments). A bad
// or duplicate name, or a schema that is not an object, is an error now,
// not at the first call (seed 001's McpToolRegistrar.register_tool).
func (r *Runtime) RegisterTool(namespace, action, description string, inputSchema json.RawMessage, h ToolHandler) error {
	if h == nil {
		return errors.New("agenttools: RegisterTool: nil handler")
	}
	return r.add(Tool{Namespace: namespace, Action: action, Description: description}, inputSchema, nil,
		func(ctx context.Context, args json.RawMessage) (*provider.Result, error) {
			out, err := h(ctx, callInfo(ctx, namespace, action), args)
			if err != nil {
				return nil, err
			}
			return toResult(out)
		})
}

// AddTool registers a typed tool: the input and output schemas are
// inferred from In and Out (struct fields with json and jsonschema tags,
// as the official go-sdk's mcp.AddTool does), arguments are decoded into
// In, and Out is returned as JSON text and structuredContent. In must be a
// struct (tool arguments are a JSON object).
func AddTool[In, Out any](r *Runtime, t Tool, h func(ctx context.Context, call *CallInfo, in In) (Out, error)) error {
	if h == nil {
		return errors.New("agenttools: AddTool: nil handler")
	}
	in, err := jsonschema.For[In](nil)
	if err != nil {
		return fmt.Errorf("agenttools: %s_%s: input schema: %w", t.Namespace, t.Action, err)
	}
	inRaw, _ := jsonscan.Marshal(in)
	var outRaw json.RawMessage
	if out, err := jsonschema.For[Out](nil); err == nil && out.Type == "object" {
		outRaw, _ = jsonscan.Marshal(out) // only object outputs can be structuredContent
	}
	return r.add(t, inRaw, outRaw, func(ctx context.Context, args json.RawMessage) (*provider.Result, error) {
		var v In
		if len(args) > 0 && string(args) != "null" {
			if err := json.Unmarshal(args, &v); err != nil {
				return nil, fmt.Errorf("decoding the arguments: %w", err)
			}
		}
		out, err := h(ctx, callInfo(ctx, t.Namespace, t.Action), v)
		if err != nil {
			return nil, err
		}
		return toResult(out)
	})
}

func (r *Runtime) add(t Tool, in, out json.RawMessage, h native.Handler) error {
	r.mu.Lock()
	ns, err := native.Normalize(t.Namespace)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	g, err := r.groupLocked(ns, ProviderOptions{})
	r.mu.Unlock()
	if err != nil {
		return err
	}
	ro := t.ReadOnly || slices.Contains(g.opts.ReadOnly, t.Action)
	return g.p.Add(native.Tool{Name: t.Action, Description: t.Description, InputSchema: in, OutputSchema: out,
		ReadOnly: ro, Timeout: t.Timeout, Handler: h})
}

func callInfo(ctx context.Context, namespace, action string) *CallInfo {
	c := provider.CallerFrom(ctx)
	ns, _ := native.Normalize(namespace)
	return &CallInfo{Tool: ns + "_" + action, Session: c.Session, Client: c.Client, User: c.User, ctx: ctx}
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
