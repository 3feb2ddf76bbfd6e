package agenttools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/native"
)

// Provider is a backend of tools written outside this module: it lists its
// tools and runs them, and [Runtime.AddProvider] serves them beside the
// config's providers and the program's plugins. Its calls take the same
// pipeline as every other (validation against the listed input schema,
// policy, confirmation of tools that are not read-only, audit, loop
// guard), so Call only runs calls that passed them.
//
// A Provider may also implement [Starter], [Closer] and [ChangeNotifier].
type Provider interface {
	// Info describes the provider; it is read once, when it is added.
	Info() ProviderInfo
	// Tools lists the provider's tools, each with an empty Namespace (or
	// the provider's ID) and a snake_case Action. The runtime calls it when
	// it first reads its catalog, then again after the provider reported a
	// change ([ChangeNotifier]) or, for a provider that cannot report its
	// changes, at most once per [Options.RelistInterval] on the call path
	// (a call of a tool it does not know yet re-lists at once). A listing
	// with a bad tool (bad name, duplicate, schema that is not an object,
	// no description) fails whole, and doctor says why.
	//
	// A schema is encoded once per *jsonschema.Schema value: to change a
	// tool's schema, list a new Schema rather than changing a listed one in
	// place.
	Tools(ctx context.Context) ([]*Tool, error)
	// Call runs call.Action with arguments already validated against its
	// input schema. A failure of the tool itself is a Result with IsError
	// or a *ToolError (its code and hint reach the agent); any other error
	// becomes a BACKEND_ERROR. A panic is recovered, and a Call that
	// ignores ctx still lets the agent's call answer on time.
	Call(ctx context.Context, call *CallInfo, args json.RawMessage) (*Result, error)
}

// ProviderInfo describes a [Provider].
type ProviderInfo struct {
	// ID is the provider's namespace, snake_case (dashes become
	// underscores): its tools are called {ID}_{Action}.
	ID string
	// Description is one line a model reads to pick the provider.
	Description string
	// DiscoverHint says what to search this provider for.
	DiscoverHint string
	// NoConfirm: no tool of this provider asks for confirmation. By default
	// every tool that is not read-only does.
	NoConfirm bool
	// Timeout bounds each call (0: the runtime's default, 60s).
	Timeout time.Duration
}

// Starter is implemented by a Provider with a start phase (a connection to
// open): Start runs once, during [Runtime.Start]; an error is logged and
// the provider's tools stay listed.
type Starter interface {
	Start(ctx context.Context) error
}

// Closer is implemented by a Provider that holds resources: [Runtime.Close]
// closes it.
type Closer interface {
	Close() error
}

// ChangeNotifier is implemented by a Provider whose tool list changes on
// its own and that says when: the runtime gives it a function to call after
// a change, which re-reads Tools and tells every session list_changed. It
// may be given a new function after a config reload; call the latest.
//
// The runtime then trusts its last listing until changed is called, so a
// call of one of its tools costs what a call of a registered tool costs; a
// Provider without it is re-listed at most once per
// [Options.RelistInterval].
type ChangeNotifier interface {
	NotifyChanges(changed func())
}

// AddProvider adds a backend of the program's own, before Start. Its id
// must not be a plugin's or another provider's.
func (r *Runtime) AddProvider(p Provider) error {
	if p == nil {
		return errors.New("agenttools: AddProvider: nil provider")
	}
	info := p.Info()
	desc := info.Description
	if desc == "" {
		desc = "Tools of " + info.ID + "."
	}
	src := &source{p: p, id: normalized(info.ID), relist: r.relist}
	src.fresh.Now = r.now
	if _, ok := p.(ChangeNotifier); ok {
		src.relist = 0 // fresh until it reports a change
	}
	np, err := native.NewSource(catalog.ProviderInfo{
		ID: info.ID, Kind: "native", Description: desc, DiscoverHint: info.DiscoverHint,
		RequireConfirm: !info.NoConfirm, Timeout: info.Timeout,
	}, src)
	if err != nil {
		return fmt.Errorf("agenttools: AddProvider: %w", err)
	}
	return r.rt.AddProvider(np, false)
}

func normalized(id string) string {
	ns, _ := native.Normalize(id) // NewSource reports a bad id
	return ns
}

// source lists and runs a Provider's tools for the runtime's in-process
// provider, passes its optional phases on, and says how fresh its last
// listing is (provider.Fresher).
type source struct {
	p  Provider
	id string // normalized

	// relist bounds how long a listing is trusted: 0 for a ChangeNotifier
	// (until it reports a change), else Options.RelistInterval.
	relist time.Duration
	fresh  provider.Freshness

	mu      sync.Mutex
	schemas map[*jsonschema.Schema]json.RawMessage // encoded by the last listings
}

var (
	_ native.Source     = (*source)(nil)
	_ provider.Starter  = (*source)(nil)
	_ provider.Closer   = (*source)(nil)
	_ provider.Notifier = (*source)(nil)
	_ provider.Fresher  = (*source)(nil)
)

// Fresh implements provider.Fresher: the last listing succeeded and the
// provider reported no change since (a ChangeNotifier), or it is younger
// than the relist interval (any other Provider).
func (s *source) Fresh() bool { return s.fresh.Fresh(s.relist) }

func (s *source) Tools(ctx context.Context) ([]native.Tool, error) {
	l := s.fresh.Begin()
	listed, err := s.p.Tools(ctx)
	if err != nil {
		return nil, err
	}
	out, err := s.tools(listed)
	if err != nil {
		return nil, err
	}
	s.fresh.Done(l)
	return out, nil
}

// tools converts a listing, encoding each schema it has not encoded yet.
func (s *source) tools(listed []*Tool) ([]native.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	schemas := make(map[*jsonschema.Schema]json.RawMessage, len(s.schemas))
	encode := func(sc *jsonschema.Schema) (json.RawMessage, error) {
		if sc == nil {
			return nil, nil
		}
		if b, ok := schemas[sc]; ok {
			return b, nil
		}
		b, ok := s.schemas[sc]
		if !ok {
			var err error
			if b, err = schemaJSON(sc); err != nil {
				return nil, err
			}
		}
		schemas[sc] = b
		return b, nil
	}
	out := make([]native.Tool, 0, len(listed))
	for _, t := range listed {
		if t == nil {
			return nil, fmt.Errorf("provider %s listed a nil tool", s.id)
		}
		if ns, _ := native.Normalize(t.Namespace); t.Namespace != "" && ns != s.id {
			return nil, fmt.Errorf("provider %s listed %s_%s: a provider's tools are in its own namespace (leave Namespace empty)", s.id, t.Namespace, t.Action)
		}
		tt := *t
		tt.Namespace = s.id
		in, err := encode(tt.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("agenttools: %s_%s: input schema: %w", tt.Namespace, tt.Action, err)
		}
		outSchema, err := encode(tt.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("agenttools: %s_%s: output schema: %w", tt.Namespace, tt.Action, err)
		}
		nt := nativeToolOf(&tt, in, outSchema, func(ctx context.Context, args json.RawMessage) (*provider.Result, error) {
			res, err := s.p.Call(ctx, callInfo(ctx, s.id, tt.Action), args)
			if err != nil || res == nil {
				return nil, err
			}
			return &provider.Result{Text: res.Text, Structured: res.Structured, IsError: res.IsError, Content: res.Content}, nil
		})
		out = append(out, nt)
	}
	s.schemas = schemas // the schemas of tools no longer listed are dropped
	return out, nil
}

func (s *source) Start(ctx context.Context) error {
	if st, ok := s.p.(Starter); ok {
		return st.Start(ctx)
	}
	return nil
}

func (s *source) Close() error {
	if c, ok := s.p.(Closer); ok {
		return c.Close()
	}
	return nil
}

// Bind gives a ChangeNotifier its callback: the listing is stale from the
// call on, then the runtime re-reads it. A change made before the callback
// existed could not be reported: binding makes the listing stale too.
func (s *source) Bind(_ *slog.Logger, onChange func()) {
	n, ok := s.p.(ChangeNotifier)
	if !ok {
		return
	}
	s.fresh.Changed()
	n.NotifyChanges(func() {
		s.fresh.Changed()
		onChange()
	})
}
