// Package providertest has an in-memory provider for tests of the core.
package providertest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// Fake is a provider whose tools and behaviour a test sets.
type Fake struct {
	ID   catalog.ProviderInfo
	Func func(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error)

	mu     sync.Mutex
	tools  []catalog.Tool
	err    error
	calls  []string
	skills []catalog.Skill
}

var (
	_ provider.Provider = (*Fake)(nil)
	_ provider.Skiller  = (*Fake)(nil)
)

// New returns a fake provider with the given tools (Provider fields are filled in).
func New(info catalog.ProviderInfo, tools ...catalog.Tool) *Fake {
	f := &Fake{ID: info}
	f.SetTools(tools...)
	return f
}

// Tool is a shorthand for a tool with a schema.
func Tool(name, desc, schema string, readOnly bool) catalog.Tool {
	if schema == "" {
		schema = `{"type":"object"}`
	}
	return catalog.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema), ReadOnly: readOnly}
}

// SetTools replaces the tool list (a later Tools call sees the change).
func (f *Fake) SetTools(tools ...catalog.Tool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tools = make([]catalog.Tool, len(tools))
	for i, t := range tools {
		t.Provider = f.ID.ID
		f.tools[i] = t
	}
}

// SetSkills replaces the skills.
func (f *Fake) SetSkills(skills ...catalog.Skill) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.skills = skills
}

// SetError makes Tools fail.
func (f *Fake) SetError(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// Calls returns the names of the tools called so far.
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *Fake) Info() catalog.ProviderInfo { return f.ID }

func (f *Fake) Tools(context.Context) ([]catalog.Tool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tools, f.err
}

func (f *Fake) Call(ctx context.Context, t catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, t.Name)
	f.mu.Unlock()
	if f.Func != nil {
		return f.Func(ctx, t, args)
	}
	return &provider.Result{Text: fmt.Sprintf("%s(%s)", t.Name, args)}, nil
}

func (f *Fake) Skills(context.Context) ([]catalog.Skill, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.skills, nil
}

// RunSkill calls every tool named in args.tools with args.args, in order, through the pipeline
// and joins their texts: enough to prove skills go through the full pipeline.
func (f *Fake) RunSkill(ctx context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error) {
	var a struct {
		Tools []string        `json:"tools"`
		Args  json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	out := name + ":"
	for _, t := range a.Tools {
		r, err := tools.CallTool(ctx, t, a.Args)
		if err != nil {
			return nil, err
		}
		out += " " + r.Text
	}
	return &provider.Result{Text: out}, nil
}
