package pipeline

import (
	"context"
	"encoding/json"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Catalog is what Resolve needs from the registry.
type Catalog interface {
	// Refresh re-reads providers that change under us (scripts edited on disk).
	Refresh(ctx context.Context) bool
	Lookup(canonical string) (catalog.Tool, bool)
	Find(providerID, name string) (catalog.Tool, bool)
	Provider(id string) (provider.Provider, catalog.ProviderInfo, bool)
	Tools(providerID string) []catalog.Tool
}

// Resolve maps the requested name to a catalog tool, with teaching errors
// that quote and suggest only what the caller may see (gate).
// maxToolName bounds a name worth resolving: a canonical name is a
// provider id and a tool name (MCP tool names are at most 128 characters),
// far below it.
const maxToolName = 1024

func Resolve(cat Catalog, gate *policy.Gate) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, req *Request) *Response {
			if req.Malformed != nil {
				return fail(req.Malformed, "invalid")
			}
			if req.Op && req.Backend != nil {
				// Resolved by the caller: a forwarded request that is no
				// catalog tool (a resource read, a prompt fetch: passthrough
				// Gate), audited and allowed or denied like a call.
				return next(ctx, req)
			}
			cat.Refresh(ctx)
			if req.Skill {
				if resp := resolveSkill(gate, cat, req); resp != nil {
					return resp
				}
				return next(ctx, req)
			}
			if req.Tool == "" {
				return fail(missingToolName(req), "invalid")
			}
			if len(req.Tool) > maxToolName {
				// No tool has such a name, and looking for similar ones
				// would cost work in proportion to it (a script can ask with
				// megabytes): refused at once, nothing suggested.
				return fail(toolerr.New(toolerr.UnknownTool,
					"Use a tool's name as listed: search for the right tool first.",
					"no tool has a name of %d bytes (names are at most %d)", len(req.Tool), maxToolName).
					With("did_you_mean", []string{}), "invalid")
			}
			if req.Provider != "" {
				if _, _, ok := cat.Provider(req.Provider); !ok {
					return fail(toolerr.New(toolerr.ProviderUnavailable,
						"Call agent_tools_help to see the providers that are loaded now.",
						"provider %q is not loaded", clipName(req.Provider)), "invalid")
				}
			}
			var (
				t  catalog.Tool
				ok bool
			)
			if req.Provider != "" {
				t, ok = cat.Find(req.Provider, req.Tool)
			} else {
				t, ok = cat.Lookup(req.Tool)
			}
			if !ok && cat.Refresh(provider.WithRescan(ctx)) { // an unknown name: one full rescan first
				t, ok = lookup(cat, req)
			}
			if !ok {
				if e := heldTool(gate, cat, req); e != nil { // held.go
					return fail(e, "denied")
				}
				return fail(unknownTool(gate, cat, req), "invalid")
			}
			p, info, ok := cat.Provider(t.Provider)
			if !ok {
				if w, isWhy := cat.(whyOff); isWhy {
					if e := w.WhyOff(t); e != nil {
						return fail(e, "invalid")
					}
				}
				return fail(toolerr.New(toolerr.ProviderUnavailable, "", "provider %q is not loaded", t.Provider), "invalid")
			}
			req.Resolved, req.Info, req.Backend = t, info, p
			req.Args = t.MergeDefaults(req.Args) // an override's visible defaults, before validation (no-op without)
			return next(ctx, req)
		}
	}
}

// whyOff is a catalog that knows why a tool it resolved has no provider
// now (its provider was switched off at run time): the PROVIDER_UNAVAILABLE
// to answer, with that reason, or nil.
type whyOff interface {
	WhyOff(t catalog.Tool) *toolerr.Error
}

// nestedNameKeys are where models put the tool name by mistake.
var nestedNameKeys = []string{"toolName", "tool_name", "tool", "name"}

func missingToolName(req *Request) *toolerr.Error {
	e := toolerr.New(toolerr.MissingToolName,
		"Name the tool at the top level of the call, next to `arguments`, not inside it.",
		"no tool name given to %s", req.Via)
	var inner map[string]json.RawMessage
	if json.Unmarshal(req.Args, &inner) != nil {
		return e
	}
	for _, k := range nestedNameKeys {
		var name string
		if json.Unmarshal(inner[k], &name) != nil || name == "" {
			continue
		}
		args := inner["arguments"]
		if len(args) == 0 {
			rest := make(map[string]json.RawMessage, len(inner))
			for kk, v := range inner {
				if kk != k {
					rest[kk] = v
				}
			}
			args, _ = jsonscan.Marshal(rest)
		}
		e.Message = "the tool name " + strconvQuote(clipName(name)) + " was nested inside `arguments`"
		if req.Shape != nil {
			e.With("correct_shape", req.Shape.Call(name, args, nil))
		}
		return e
	}
	if req.Shape != nil {
		e.With("correct_shape", req.Shape.Call("<tool name>", json.RawMessage(`{}`), nil))
	}
	return e
}

func strconvQuote(s string) string { b, _ := jsonscan.Marshal(s); return string(b) }

func unknownTool(gate *policy.Gate, cat Catalog, req *Request) *toolerr.Error {
	var candidates []string
	if req.Provider != "" {
		for _, t := range cat.Tools(req.Provider) {
			if visibleTo(gate, req, t) {
				candidates = append(candidates, t.Name)
			}
		}
	} else {
		for _, t := range cat.Tools("") {
			if visibleTo(gate, req, t) {
				candidates = append(candidates, t.Canonical)
			}
		}
	}
	similar := text.Suggestions(req.Tool, candidates, 3)
	hint := "Use a name from did_you_mean, or search for the right tool first."
	if req.Provider != "" {
		hint = "Use a name from did_you_mean, or call agent_tools_" + req.Provider + "_discover to list this provider's tools."
	}
	if len(similar) == 0 { // never point at an empty list
		hint = "No tool has a similar name: search by what it does (agent_tools_search, agent_tools_<provider>_discover, or `agent-tools search <words>`)."
		if req.Provider != "" {
			hint = "No tool of this provider has a similar name: call agent_tools_" + req.Provider + "_discover with what it does."
		}
	}
	return toolerr.New(toolerr.UnknownTool, hint, "no tool named %q", clipName(req.Tool)).
		With("did_you_mean", similar)
}
