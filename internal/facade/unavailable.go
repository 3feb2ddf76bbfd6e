package facade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// A provider that is down, still starting or waiting for a login is not an
// empty one: a call or search that could concern it says
// so, with its reason, in every mode. Its cached names, where it has any,
// decide which calls concern it; without any, every name with its prefix
// does (or, for a provider whose tools have bare names, every name nothing
// else answers).

// unavailableErr is PROVIDER_UNAVAILABLE for p, whose last load failed, its
// reason through the redactor (an upstream's error text may quote what it
// was given).
func unavailableErr(p registry.ProviderStatus) *toolerr.Error {
	if te, ok := toolerr.As(p.Err); ok && (te.Code == toolerr.ProviderUnavailable || te.Code == toolerr.ProviderNeedsLogin) {
		c := *te // a copy: the registry keeps te
		c.Message = redact.String(c.Message)
		c.Details = maps.Clone(te.Details)
		return &c
	}
	hint := "It is retried on the next call; if it keeps failing, tell the user (agent-tools doctor shows why)."
	if errors.Is(p.Err, provider.ErrStarting) {
		hint = "It is still starting: retry in a few seconds."
	}
	return toolerr.New(toolerr.ProviderUnavailable, hint, "provider %q is unavailable: %s", p.Info.ID, redact.String(p.Err.Error()))
}

// down lists the enabled providers whose last load failed.
func (f *Facade) down() []registry.ProviderStatus {
	var out []registry.ProviderStatus
	for _, p := range f.cat.Providers() {
		if p.Enabled && p.Err != nil {
			out = append(out, p)
		}
	}
	return out
}

// prefixesOf are the lower-case prefixes a canonical name of provider id
// starts with, under either naming scheme.
func prefixesOf(id string) []string {
	out := []string{strings.ToLower(id) + "_"}
	for _, s := range []naming.Scheme{naming.Readable, naming.Lossless} {
		if c, err := s.Canonical(id, "x", false); err == nil {
			out = append(out, strings.ToLower(strings.TrimSuffix(c, "x")))
		}
	}
	return out
}

// downFor is PROVIDER_UNAVAILABLE when the name a call asked for (not found
// among the loaded tools) could be a tool of a provider that is down and
// has no cached tools: its prefix starts the name. bare is the provider
// with bare tool names that could have it, for the caller to use when
// nothing else answers.
func (f *Facade) downFor(name string) (e *toolerr.Error, bare *registry.ProviderStatus) {
	low := strings.ToLower(strings.TrimSpace(name))
	for _, p := range f.down() {
		if p.Tools > 0 {
			continue // its cached names say the name is not its
		}
		if p.Info.HostLocal {
			if bare == nil {
				bare = &p
			}
			continue
		}
		for _, pre := range prefixesOf(p.Info.ID) {
			if strings.HasPrefix(low, pre) && len(low) > len(pre) {
				return unavailableErr(p), nil
			}
		}
	}
	return nil, bare
}

// bareDown is PROVIDER_UNAVAILABLE for a name no loaded tool is close to,
// when a provider with bare tool names, down and without cached names,
// could have it.
func (f *Facade) bareDown(req *pipeline.Request, bare *registry.ProviderStatus) *toolerr.Error {
	if bare == nil {
		return nil
	}
	var all []string
	for _, t := range f.cat.Tools("") {
		all = append(all, t.Canonical, t.Name)
	}
	if len(text.Suggestions(req.Tool, all, 1)) > 0 {
		return nil // the pipeline's suggestions answer
	}
	e := unavailableErr(*bare)
	e.Message = fmt.Sprintf("no loaded tool is named %q, and %s, which may have it", req.Tool, e.Message)
	return e
}

// afterRescan is the answer for a name a provider that is down may own,
// once every provider was asked again (as the pipeline does for an unknown
// name): a failed upstream whose backoff has passed is started again, and a
// starting one waited for, so a call that can succeed now does (nil: the
// pipeline resolves it); else why is computed again from what is known now.
func (f *Facade) afterRescan(ctx context.Context, req *pipeline.Request, why func() *toolerr.Error) *toolerr.Error {
	f.cat.Refresh(provider.WithRescan(ctx))
	if f.resolvable(req) {
		return nil
	}
	return why()
}

// backNow reports whether a name this server does not publish resolves now
// to a tool policy lets clients see: an upstream that is back (Sync is
// publishing it). A denied tool stays unknown to a client that calls it.
func (f *Facade) backNow(req *pipeline.Request) bool {
	if !f.resolvable(req) {
		return false
	}
	t, ok := f.cat.Lookup(req.Tool)
	if req.Provider != "" {
		t, ok = f.cat.Find(req.Provider, req.Tool)
	}
	return ok && f.sees(&req.Caller, t.Provider, t.Canonical)
}

// unavailableNote lists the providers a search could not look into, for a
// search with few results (or none): the tools wanted may be theirs.
func (f *Facade) unavailableNote(out map[string]any, o index.Options, results int) {
	if results >= fewHits {
		return
	}
	var notes []map[string]string
	var ids []string
	for _, p := range f.down() {
		if o.Provider != "" && p.Info.ID != o.Provider {
			continue
		}
		notes = append(notes, map[string]string{"provider": p.Info.ID, "reason": unavailableErr(p).Message})
		ids = append(ids, p.Info.ID)
	}
	if len(notes) == 0 {
		return
	}
	sort.Strings(ids)
	out["unavailable"] = notes
	note := fmt.Sprintf("Provider(s) %s could not be searched (see unavailable): what you need may be theirs; tell the user if so.", strings.Join(ids, ", "))
	if next, _ := out["next"].(string); next != "" {
		note = next + " " + note
	}
	out["next"] = note
}

// fewHits: a search with fewer results notes the unavailable providers.
const fewHits = 3

// metaMiss answers a call of another mode's meta tool (for example
// agent_tools_local_call in flat mode, agent_tools_local_discover in search
// mode) with the call this mode takes instead. nil when name is none.
func (f *Facade) metaMiss(ctx context.Context, req *pipeline.Request) *toolerr.Error {
	id, verb, ok := f.metaParts(req.Tool)
	if !ok {
		return nil
	}
	var args map[string]json.RawMessage
	_ = json.Unmarshal(rawOrEmpty(req.Args), &args)
	if verb == "call" && args != nil {
		readEnvelope(args, "toolName", "tool", nil) // tool_name, args, ... (envelope.go)
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			var s string
			if json.Unmarshal(args[k], &s) == nil && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s)
			}
		}
		return ""
	}
	if id == "" {
		id = str("provider")
	}
	mode := string(f.opts.Mode)
	switch verb {
	case "call":
		inner := str(nestedNameKeys...)
		if inner == "" {
			return nil // the pipeline says the name is missing
		}
		innerArgs := spreadInto(args, args["arguments"])
		sub := &pipeline.Request{Caller: req.Caller, Via: req.Via, Provider: id, Tool: inner, Args: innerArgs, Shape: req.Shape}
		if f.backNow(sub) { // a tool policy hides stays unknown
			var t, _ = f.cat.Find(id, inner)
			if id == "" {
				t, _ = f.cat.Lookup(inner)
			}
			shape, name := f.shapeFor(req, t)
			return toolerr.New(toolerr.UnknownTool, "Make the call in correct_shape: this server runs in mode "+mode+".",
				"%q is another mode's tool; in mode %s, tool %q is called as correct_shape shows", req.Tool, mode, name).
				With("did_you_mean", []string{name}).
				With("correct_shape", shape.Call(name, innerArgs, nil))
		}
		if e := f.missError(ctx, sub); e != nil {
			return e
		}
		return f.listHint(req, id, inner)
	default: // discover, search
		return f.listHint(req, id, str("query"))
	}
}

// spreadInto is a call's arguments with the keys of its envelope that are
// none of the envelope's own (the tool's arguments spread beside its name)
// put back inside; inner as it is when there are none.
func spreadInto(envelope map[string]json.RawMessage, inner json.RawMessage) json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range envelope {
		switch k {
		case "toolName", "tool", "arguments", "confirm", "provider":
			continue
		}
		_, a := envelope["toolName"]
		_, b := envelope["tool"]
		if !a && !b && nameKeyRank(k) > 0 {
			continue // an unread name (two of them disagree): not an argument
		}
		if out == nil {
			out = map[string]json.RawMessage{}
			if isObject(inner) {
				_ = json.Unmarshal(inner, &out)
			}
		}
		out[k] = v
	}
	if out == nil {
		return inner
	}
	b, _ := jsonscan.Marshal(out)
	return b
}

// nestedNameKeys are where another mode's call names its tool.
var nestedNameKeys = []string{"toolName", "tool", "tool_name", "name"}

// metaParts splits a meta tool's name: agent_tools_<id>_<verb> for a
// loaded provider id, or agent_tools_call / agent_tools_search (id "").
// Names this mode publishes are not misses and never get here.
func (f *Facade) metaParts(name string) (id, verb string, ok bool) {
	switch name {
	case callTool:
		return "", "call", true
	case searchTool:
		return "", "discover", true
	}
	rest, ok := strings.CutPrefix(name, "agent_tools_")
	if !ok {
		return "", "", false
	}
	for _, v := range []string{"call", "discover"} {
		if p, ok := strings.CutSuffix(rest, "_"+v); ok {
			if _, _, loaded := f.cat.Provider(p); loaded {
				return p, v, true
			}
		}
	}
	return "", "", false
}

// listHint says how this mode finds tools, with the closest names (by the
// query or the name asked for) as did_you_mean and the first one's call.
func (f *Facade) listHint(req *pipeline.Request, id, query string) *toolerr.Error {
	mode := string(f.opts.Mode)
	if id != "" && !f.providerInView(id) {
		id = "" // a provider outside this profile is not pointed at
	}
	var how string
	var shape map[string]any
	switch f.opts.Mode {
	case Search:
		a := map[string]any{"query": query}
		if query == "" {
			a["query"] = "<what you want to do>"
		}
		if id != "" {
			a["provider"] = id
		}
		shape = map[string]any{"tool": searchTool, "arguments": a}
		how = "Search with " + searchTool + " as correct_shape shows, then call " + callTool + "."
	case Progressive:
		if id == "" {
			how = "Call " + helpTool + " for the providers, then agent_tools_<provider>_discover."
			break
		}
		a := map[string]any{}
		if query != "" {
			a["query"] = query
		}
		shape = map[string]any{"tool": metaName(id, "discover"), "arguments": a}
		how = "List or search the provider's tools with " + metaName(id, "discover") + " as correct_shape shows."
	case Text:
		how = "Use " + execTool + " with `search <words>` or `<provider> discover [words]`."
	default:
		how = "Every tool is listed in tools/list: call it directly by its name, with its own arguments."
	}
	var names []string
	if query != "" {
		sees := f.seer(&req.Caller)
		for _, h := range f.cat.Search(query, index.Options{Provider: id, Limit: 3}) {
			if t, ok := f.cat.Lookup(h.ID); ok && h.Kind != "skill" && sees(t.Provider, t.Canonical) {
				_, n := f.shapeFor(req, t)
				names = append(names, n)
			}
		}
	}
	e := toolerr.New(toolerr.UnknownTool, how, "%q is not a tool in mode %s", req.Tool, mode).
		With("did_you_mean", names)
	if shape != nil {
		e.With("correct_shape", shape)
	} else if len(names) > 0 {
		if t, ok := f.lookupShown(names[0]); ok {
			s, n := f.shapeFor(req, t)
			e.With("correct_shape", s.Call(n, nil, nil))
		}
	}
	return e
}

// lookupShown finds a tool by the name shapeFor gave it.
func (f *Facade) lookupShown(name string) (t catalog.Tool, ok bool) {
	if t, ok = f.cat.Lookup(name); ok {
		return t, true
	}
	for _, t := range f.cat.Tools("") {
		if t.Name == name {
			return t, true
		}
	}
	return t, false
}
