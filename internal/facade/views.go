package facade

import (
	"context"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
)

// A facade serves one profile (Options.Profile, "" for /mcp): its view
// (Options.View) decides which providers and tools it publishes, in its
// listing, discover, search and help alike, and every call it makes carries
// the profile to the pipeline, whose policy stage refuses a tool outside
// it. Per-identity rules (Options.Access) hide, in tools/list, what the
// caller's identity may not call.

// visible reports whether a tool is listed: policy's global rules and the
// profile's view.
func (f *Facade) visible(provider, canonical string) bool {
	if !f.rules().Visible(canonical) {
		return false
	}
	v := f.view()
	if v == nil {
		return true
	}
	return f.providerInView(provider) && v.Tools.Visible(canonical)
}

// hidesNone reports whether visible holds for every tool of a provider.
func (f *Facade) hidesNone(provider string) bool {
	if !f.rules().HidesNone() {
		return false
	}
	v := f.view()
	return v == nil || f.providerInView(provider) && v.Tools.HidesNone()
}

// grantOf is what the caller of a request may see through this facade's
// profile: nil when no per-identity rule filters anything for it. The grant
// is the Access's cached one for (identity, claims, profile): one lookup.
func (f *Facade) grantOf(x *sdk.RequestExtra) *policy.Grant {
	if f.opts.Access == nil {
		return nil
	}
	a := f.opts.Access()
	if a.Empty() {
		return nil
	}
	id := processIdentity
	if x != nil && x.TokenInfo != nil && x.TokenInfo.UserID != "" {
		id = x.TokenInfo.UserID
	}
	if g := a.For(id, claimsOf(x), f.opts.Profile); !g.Open() {
		return g
	}
	return nil
}

// sees is the gate's See for a caller through this facade: whether the
// tool exists for it at all. Every teaching that names a tool (a miss, a
// suggestion, another mode's call) asks it, so nothing names a tool the
// caller may not see.
func (f *Facade) sees(c *policy.Caller, provider, canonical string) bool {
	return f.seer(c)(provider, canonical)
}

// seer is sees for one caller, the gate made once: a teaching that looks
// at many tools (every tool of a provider) asks it per tool. A caller the
// door did not bind (no identity) sees nothing: a teaching must never
// answer for a caller it has not identified (a miss taught before the
// session was bound named tools the caller may not see).
func (f *Facade) seer(c *policy.Caller) func(provider, canonical string) bool {
	see := f.targetSeer(c)
	return func(provider, canonical string) bool {
		return see(policy.Target{Provider: provider, Canonical: canonical})
	}
}

// seesTarget is the gate's See for one target of any kind.
func (f *Facade) seesTarget(c *policy.Caller, t policy.Target) bool { return f.targetSeer(c)(t) }

// targetSeer is the one place the facade asks what a caller may see.
func (f *Facade) targetSeer(c *policy.Caller) func(policy.Target) bool {
	if c == nil || c.Identity == "" {
		return func(policy.Target) bool { return false }
	}
	var access *policy.Access
	if f.opts.Access != nil {
		access = f.opts.Access()
	}
	if access.Empty() {
		return func(t policy.Target) bool { return f.visible(t.Provider, t.Canonical) }
	}
	in := *c
	in.Profile = f.opts.Profile
	gate := policy.NewGate(f.rules(), access, nil)
	return func(t policy.Target) bool {
		return f.visible(t.Provider, t.Canonical) && gate.Decide(&in, policy.See, t).Allowed()
	}
}

// visibleTo is visible for one caller: also within its grant (nil = all).
func (f *Facade) visibleTo(g *policy.Grant, provider, canonical string) bool {
	return f.visible(provider, canonical) && (g == nil || g.Visible(provider, canonical))
}

// visibleToolsTo are a provider's tools the caller with grant g may see.
func (f *Facade) visibleToolsTo(g *policy.Grant, provider string) []catalog.Tool {
	tools := f.visibleTools(provider)
	if g == nil {
		return tools
	}
	out := tools[:0]
	for _, t := range tools {
		if g.Visible(t.Provider, t.Canonical) {
			out = append(out, t)
		}
	}
	return out
}

// visibleCount is len(visibleToolsTo(g, p)), from the provider's count
// when nothing can hide a tool (help answered for 10,000 tools copied
// them all to count them).
func (f *Facade) visibleCount(g *policy.Grant, p registry.ProviderStatus) int {
	if g == nil && f.hidesNone(p.Info.ID) {
		return p.Tools
	}
	return len(f.visibleToolsTo(g, p.Info.ID))
}

// skillVisibleTo is skillVisible for one caller.
func (f *Facade) skillVisibleTo(g *policy.Grant, info catalog.ProviderInfo, name string) bool {
	canonical, err := registry.SkillCanonical(naming.SchemeOf(f.cat), info, name)
	return err == nil && f.visibleTo(g, info.ID, canonical)
}

// view is the profile's current view: the live Access's when there is one
// (a config reload changes it), else Options.View.
func (f *Facade) view() *policy.View {
	if f.opts.Profile != "" && f.opts.Access != nil {
		return f.opts.Access().View(f.opts.Profile)
	}
	return f.opts.View
}

// providerInView reports whether the profile's view includes a provider.
func (f *Facade) providerInView(id string) bool {
	v := f.view()
	if v == nil || v.Providers == nil {
		return true
	}
	for _, p := range v.Providers {
		if p == id {
			return true
		}
	}
	return false
}

// Profile is the profile this facade serves ("" for the default endpoint).
func (f *Facade) Profile() string { return f.opts.Profile }

// claimsOf are the verified claims the transport carried with the identity.
func claimsOf(x *sdk.RequestExtra) policy.Claims {
	if x == nil || x.TokenInfo == nil {
		return ""
	}
	c, _ := x.TokenInfo.Extra[policy.ClaimsExtraKey].(policy.Claims)
	return c
}

// identityOfRequest is identityOf for any request (tools/list included).
func identityOfRequest(req sdk.Request) string {
	if x := req.GetExtra(); x != nil && x.TokenInfo != nil && x.TokenInfo.UserID != "" {
		return x.TokenInfo.UserID
	}
	return processIdentity
}

// filterList removes from a tools/list answer what is callable but not
// listed (progressive's per-provider meta-tools while providers are
// grouped) and what the caller's identity may not call: a flat tool by its
// canonical name, a provider's meta-tools when none of its tools is
// visible to the caller.
func (f *Facade) filterList(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		lt, ok := res.(*sdk.ListToolsResult)
		if !ok {
			return res, err
		}
		f.mu.Lock()
		owners := f.owners
		f.mu.Unlock()
		var grant *policy.Grant
		if f.opts.Access != nil {
			if access := f.opts.Access(); !access.Empty() {
				if g := access.For(identityOfRequest(req), claimsOf(req.GetExtra()), f.opts.Profile); !g.Open() {
					grant = g
				}
			}
		}
		unlisted := false
		for _, t := range lt.Tools {
			unlisted = unlisted || owners[t.Name].unlisted
		}
		if grant == nil && !unlisted {
			return res, err
		}
		seen := map[string]bool{}
		kept := lt.Tools[:0:0]
		for _, t := range lt.Tools {
			o, known := owners[t.Name]
			switch {
			case o.unlisted:
				continue
			case grant == nil || !known || o.provider == "":
			case o.canonical != "":
				if !grant.Visible(o.provider, o.canonical) {
					continue
				}
			default:
				v, done := seen[o.provider]
				if !done {
					v = f.anyVisible(grant, o.provider)
					seen[o.provider] = v
				}
				if !v {
					continue
				}
			}
			kept = append(kept, t)
		}
		out := *lt
		out.Tools = kept
		return &out, nil
	}
}

// anyVisible reports whether the grant reaches any listed tool of a provider.
func (f *Facade) anyVisible(g *policy.Grant, provider string) bool {
	for _, t := range f.visibleTools(provider) {
		if g.Visible(provider, t.Canonical) {
			return true
		}
	}
	return false
}

// owner is which provider (and, for a flat tool, which canonical name) a
// published MCP tool stands for; zero for the runtime's own tools.
// unlisted tools answer calls but are left out of tools/list: progressive's
// per-provider meta-tools while the providers are grouped, for a client
// that calls them by name (seed 000's shapes, a list read before).
type owner struct {
	provider, canonical string
	unlisted            bool
}
