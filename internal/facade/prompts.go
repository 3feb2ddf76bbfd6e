package facade

import (
	"context"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/prompts"
)

// PromptSource supplies the prompts to serve (prompts.Dir re-reads its files).
type PromptSource interface {
	Load() ([]*prompts.Prompt, bool, []prompts.Problem)
}

// SyncPrompts publishes the runtime's prompts and the upstream prompts as
// they are now; clients get prompts/list_changed when they changed. The
// runtime calls it when a provider reports a change.
func (f *Facade) SyncPrompts() {
	f.syncPrompts()
	f.pt.SyncPrompts()
}

func (f *Facade) localPrompt(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.prompts[name]
}

// syncPrompts publishes the source's prompts when they changed; the SDK sends
// notifications/prompts/list_changed.
func (f *Facade) syncPrompts() {
	if f.opts.Prompts == nil {
		return
	}
	ps, changed, _ := f.opts.Prompts.Load()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !changed && f.promptsSynced {
		return
	}
	f.promptsSynced = true
	want := make(map[string]bool, len(ps))
	for _, p := range ps {
		want[p.Name] = true
	}
	var stale []string
	for name := range f.prompts {
		if !want[name] {
			stale = append(stale, name)
			delete(f.prompts, name)
		}
	}
	if len(stale) > 0 {
		f.server.RemovePrompts(stale...)
	}
	for _, p := range ps {
		f.prompts[p.Name] = true
		f.server.AddPrompt(mcpPrompt(p), promptHandler(p))
	}
}

func mcpPrompt(p *prompts.Prompt) *sdk.Prompt {
	out := &sdk.Prompt{Name: p.Name, Description: p.Description}
	for _, a := range p.Arguments {
		out.Arguments = append(out.Arguments, &sdk.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return out
}

func promptHandler(p *prompts.Prompt) sdk.PromptHandler {
	return func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		text, err := p.Render(req.Params.Arguments)
		if err != nil {
			return nil, err // prompts/get has no error result: a JSON-RPC error says what is missing
		}
		return &sdk.GetPromptResult{
			Description: p.Description,
			Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}},
		}, nil
	}
}
