package policy

import (
	"slices"
	"sync"

	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// DefaultProfile names the unprofiled endpoint (/mcp, plain serve) in
// rules, metrics and audit.
const DefaultProfile = "default"

// View is a profile: which providers (nil = all) and which canonical names
// (Tools allow/deny) a session of that profile can see and call.
type View struct {
	Providers []string
	Tools     Rules
}

func (v *View) admits(provider, canonical string) bool {
	if v == nil {
		return true
	}
	if v.Providers != nil && !slices.Contains(v.Providers, provider) {
		return false
	}
	return v.Tools.Visible(canonical)
}

// IdentityRule is one per-identity rule: callers whose identity matches one
// of Identities (path.Match globs; empty = anyone), whose verified token
// has, for every claim Claims names, one of its listed values (empty = no
// condition), and who come through one of Profiles (empty = any) get Rules'
// allow/deny on top of the global ones, and Rules.Confirm (when set) as
// their confirm mode.
type IdentityRule struct {
	Identities []string
	Claims     map[string][]string
	Profiles   []string
	Rules      Rules
}

func (r *IdentityRule) matches(identity string, claims map[string][]string, profile string) bool {
	if len(r.Profiles) > 0 && !slices.Contains(r.Profiles, profile) {
		return false
	}
	if !claimsMatch(r.Claims, claims) {
		return false
	}
	if len(r.Identities) == 0 {
		return true
	}
	_, ok := firstMatch(r.Identities, identity)
	return ok
}

// Access holds the profiles and per-identity rules, compiled once per
// configuration. What applies to one (identity, profile) pair is worked out
// on its first call and remembered, so a call costs one map lookup.
type Access struct {
	views  map[string]*View
	rules  []IdentityRule
	claims []string // the claim names rules match on, sorted

	mu    sync.RWMutex
	cache map[grantKey]*Grant // a struct key: the lookup allocates nothing
}

type grantKey struct {
	identity string
	claims   Claims
	profile  string
}

// maxGrants bounds the remembered pairs; past it grants are computed per call.
const maxGrants = 10000

// NewAccess compiles views (by profile slug) and rules. A nil *Access
// grants everything.
func NewAccess(views map[string]View, rules []IdentityRule) *Access {
	a := &Access{views: map[string]*View{}, rules: slices.Clone(rules), cache: map[grantKey]*Grant{}}
	for slug, v := range views {
		v := v
		a.views[slug] = &v
	}
	for _, r := range rules {
		for n := range r.Claims {
			if !slices.Contains(a.claims, n) {
				a.claims = append(a.claims, n)
			}
		}
	}
	slices.Sort(a.claims)
	return a
}

// ClaimNames lists the token claims rules match on, worked out once per
// configuration: the transport carries only these with the identity.
func (a *Access) ClaimNames() []string {
	if a == nil {
		return nil
	}
	return a.claims
}

// Empty reports whether there are neither profiles nor rules.
func (a *Access) Empty() bool { return a == nil || (len(a.views) == 0 && len(a.rules) == 0) }

// Profiles lists the profile slugs, sorted.
func (a *Access) Profiles() []string {
	if a == nil {
		return nil
	}
	out := make([]string, 0, len(a.views))
	for s := range a.views {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// HasProfile reports whether slug is a configured profile.
func (a *Access) HasProfile(slug string) bool {
	if a == nil {
		return false
	}
	_, ok := a.views[slug]
	return ok
}

// View returns a profile's view (nil for the default profile or an unknown one).
func (a *Access) View(slug string) *View {
	if a == nil {
		return nil
	}
	return a.views[slug]
}

// Grant is what one identity may do through one profile.
type Grant struct {
	view    *View
	rules   []*Rules // the matching identity rules, in order
	confirm ConfirmMode
}

var openGrant = &Grant{}

// For returns the grant of identity, with its verified claims, through
// profile ("" = DefaultProfile).
func (a *Access) For(identity string, claims Claims, profile string) *Grant {
	if a.Empty() {
		return openGrant
	}
	if profile == "" {
		profile = DefaultProfile
	}
	key := grantKey{identity, claims, profile}
	a.mu.RLock()
	g, ok := a.cache[key]
	a.mu.RUnlock()
	if ok {
		return g
	}
	g = &Grant{view: a.views[profile]}
	have := claims.decode()
	for i := range a.rules {
		r := &a.rules[i]
		if !r.matches(identity, have, profile) {
			continue
		}
		g.rules = append(g.rules, &r.Rules)
		if g.confirm == "" {
			g.confirm = r.Rules.Confirm // the first matching rule that sets one
		}
	}
	a.mu.Lock()
	if len(a.cache) < maxGrants {
		a.cache[key] = g
	}
	a.mu.Unlock()
	return g
}

// check returns DENIED when the grant does not reach the tool (unexported:
// only the gate decides a call; no door can ask this on its own): outside the
// profile's view, or denied (or not allowed) by a matching identity rule.
func (g *Grant) check(provider, canonical string) *toolerr.Error {
	if g.view != nil && !g.view.admits(provider, canonical) {
		return toolerr.New(toolerr.Denied,
			"This tool is not part of this endpoint's profile; do not retry it. Use a tool this server lists.",
			"tool %q is outside this profile", canonical)
	}
	for _, r := range g.rules {
		if err := r.check(canonical); err != nil {
			return err
		}
	}
	return nil
}

// Visible reports whether the tool is listed for this grant.
func (g *Grant) Visible(provider, canonical string) bool {
	if g.view != nil && !g.view.admits(provider, canonical) {
		return false
	}
	for _, r := range g.rules {
		if !r.Visible(canonical) {
			return false
		}
	}
	return true
}

// ProviderVisible reports whether any of a provider's tools can be in view.
func (g *Grant) ProviderVisible(provider string) bool {
	return g.view == nil || g.view.Providers == nil || slices.Contains(g.view.Providers, provider)
}

// Open reports whether the grant filters nothing.
func (g *Grant) Open() bool { return g.view == nil && len(g.rules) == 0 }

// Confirm is the confirm mode for this grant: a matching rule's, else def.
func (g *Grant) Confirm(def ConfirmMode) ConfirmMode {
	if g.confirm != "" {
		return g.confirm
	}
	return def
}
