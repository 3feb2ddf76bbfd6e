// Package builtin provides the runtime's own tools (provider id "builtin").
// They are host-local: in flat mode they keep their bare names.
package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/codemode"
)

// ID is the provider id of the built-in tools.
const ID = codemode.Provider

// StatusTool is the name of the runtime status tool ({namespace}_{action}, as registered tools are named).
const StatusTool = "runtime_status"

// Options wire the built-ins to the runtime without importing it.
type Options struct {
	// Status returns the runtime's state (providers, mode, version). It must
	// never include credentials.
	Status func(ctx context.Context) any
	// JavaScript bounds execute_javascript; zero fields take Code's limits
	// (Timeout, Memory, CPU) and jsrun's defaults (30,000 characters, 200
	// console entries). A call's timeout_ms may set less than Timeout.
	JavaScript JavaScriptLimits
	// Runner runs the scripts (nil: jsrun.Isolated, each in its own
	// limited process where the system allows).
	Runner jsrun.Runner
	// Code bounds the tool calls a script makes through `tools` (code mode).
	Code CodeOptions
	// Slots bound the scripts running at once, in sum and per caller
	// identity (nil: the provider's own, with Code's caps; Build passes
	// the process's, jsrun.ServerSlots, so that a reload shares them).
	Slots *jsrun.Slots
}

// Provider serves the built-in tools.
type Provider struct {
	opts  Options
	tools []catalog.Tool
	slots *jsrun.Slots
}

var (
	_ provider.Provider     = (*Provider)(nil)
	_ provider.ValuesCaller = (*Provider)(nil)
)

// New returns the built-in provider.
func New(o Options) *Provider {
	slots := o.Slots
	if slots == nil {
		slots = jsrun.NewSlots(o.Code.caps())
	}
	return &Provider{opts: o, slots: slots, tools: []catalog.Tool{
		javaScriptTool(o),
		{
			Provider:    ID,
			Name:        StatusTool,
			Description: "Report this agent-tools runtime's state: version, exposure mode, every provider with its tool count and health, and load problems (skipped scripts, rejected names). Never shows credentials.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			ReadOnly:    true,
		},
	}}
}

// Info describes the provider.
func (p *Provider) Info() catalog.ProviderInfo {
	return catalog.ProviderInfo{
		ID: ID, Kind: ID, HostLocal: true, RequireConfirm: true,
		Description: "Built-in tools of the agent-tools runtime itself: a sandboxed JavaScript interpreter for calculations and data transformation, and the runtime status.",
	}
}

// Tools returns the same slice every time: the set never changes.
func (p *Provider) Tools(context.Context) ([]catalog.Tool, error) { return p.tools, nil }

// Call runs a built-in tool.
func (p *Provider) Call(ctx context.Context, t catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	switch t.Name {
	case StatusTool:
		var st any = map[string]any{}
		if p.opts.Status != nil {
			st = p.opts.Status(ctx)
		}
		b, err := jsonscan.MarshalIndent(st, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encoding status: %w", err)
		}
		return &provider.Result{Text: string(b), Structured: st}, nil
	case JavaScriptTool:
		return p.executeJavaScript(ctx, args, nil) // no tools object: a plain script
	}
	return nil, errors.New("unknown built-in tool " + fmt.Sprintf("%q", t.Name))
}

// CallValues runs a built-in tool with its call's values: execute_javascript
// lends its script the Script host (code mode's `tools`).
func (p *Provider) CallValues(ctx context.Context, t catalog.Tool, args json.RawMessage, v provider.Values) (*provider.Result, error) {
	if t.Name == JavaScriptTool {
		return p.executeJavaScript(ctx, args, v.Script)
	}
	return p.Call(ctx, t, args)
}
