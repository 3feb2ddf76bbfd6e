// Package static is the example kind of CONTRIBUTING.md ("Adding a provider
// kind"): a provider with one tool that answers with fixed text. It is not
// in the binary's list of kinds; its test registers it, which keeps the
// example compiling and true.
package static

import (
	"context"
	"encoding/json"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// Name is the kind's name, as written after kind:.
const Name = "static"

// Spec is the spec of kind static. Its yaml tags are the kind's keys.
type Spec struct {
	// Text is what the tool answers.
	Text string `json:"text" yaml:"text"`
}

// Kind implements config.Spec.
func (*Spec) Kind() string { return Name }

// Kind is the kind static, for the list of kinds.
var Kind = provider.Kind{
	Kind: config.Kind{
		Name:    Name,
		NewSpec: func() config.Spec { return &Spec{} },
		Validate: func(v *config.Validator, p *config.Provider, path string) {
			if s := p.Spec.(*Spec); !v.Present(path, "text", s.Text != "") {
				v.Errf(path, `kind static needs "text" (what the tool answers)`)
			}
		},
	},
	Build: func(h provider.Header, s config.Spec, _ provider.Deps) (provider.Provider, error) {
		return &static{id: h.ID, text: s.(*Spec).Text}, nil
	},
}

type static struct{ id, text string }

var _ provider.Provider = (*static)(nil)

func (s *static) Info() catalog.ProviderInfo {
	return catalog.ProviderInfo{ID: s.id, Kind: Name, Description: "Fixed text."}
}

func (s *static) Tools(context.Context) ([]catalog.Tool, error) {
	return []catalog.Tool{{Provider: s.id, Name: "say", Description: "Says the configured text.",
		InputSchema: json.RawMessage(`{"type":"object"}`), ReadOnly: true}}, nil
}

func (s *static) Call(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
	return &provider.Result{Text: s.text}, nil
}
