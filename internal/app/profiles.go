package app

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/prompts"
	"github.com/agent-tools/agent-tools/internal/redact"
)

// Profiles are named views of the one runtime (config profiles:): each has
// its own facade, so its own MCP server, tool list, search view and
// list_changed, over the same catalog and pipeline. The facades are made on
// first use (the HTTP front asks for /mcp/p/<slug>), and the live
// generation's Access decides what they show, so a config reload changes a
// profile's view under its sessions. Options.Profile makes the main facade
// itself a profile's (serve --profile over stdio).

// accessOf compiles profiles and policy.rules once per configuration.
func accessOf(cfg *config.Config) *policy.Access {
	if len(cfg.Profiles) == 0 && len(cfg.Policy.Rules) == 0 {
		return nil
	}
	views := make(map[string]policy.View, len(cfg.Profiles))
	for slug, p := range cfg.Profiles {
		views[slug] = policy.View{Providers: p.Providers, Tools: policy.Rules{Allow: p.Tools.Allow, Deny: p.Tools.Deny}}
	}
	rules := make([]policy.IdentityRule, 0, len(cfg.Policy.Rules))
	for _, r := range cfg.Policy.Rules {
		rules = append(rules, policy.IdentityRule{Identities: r.Identities, Claims: r.Claims, Profiles: r.Profiles,
			Rules: policy.Rules{Allow: r.Allow, Deny: r.Deny, Confirm: policy.ConfirmMode(r.Confirm)}})
	}
	return policy.NewAccess(views, rules)
}

// access is the live generation's Access (nil: no profiles, no rules).
func (a *App) access() *policy.Access { return a.current().access }

// Gate is the live generation's access decision (policy.Gate): the
// console and every other door outside the pipeline ask it.
func (a *App) Gate() *policy.Gate { return a.current().gate }

// scriptsMayMutate is code.allowMutations of the live configuration.
func (a *App) scriptsMayMutate() bool { return a.current().cfg.Code.AllowMutations }

// claimNames are the token claims the live rules match on.
func (a *App) claimNames() []string { return a.access().ClaimNames() }

// Profiles lists the configured profile slugs, sorted.
func (a *App) Profiles() []string { return a.Config().ProfileNames() }

// profileMode is a profile's mode, else the runtime's.
func (a *App) profileMode(g *generation, slug string) (facade.Mode, error) {
	p, ok := g.cfg.Profiles[slug]
	if !ok {
		return "", &ConfigError{fmt.Errorf("unknown profile %q (configured: %s)", slug, profileList(g.cfg))}
	}
	if p.Mode == "" || a.opts.Mode != "" {
		return g.mode, nil
	}
	m, err := facade.ParseMode(p.Mode)
	if err != nil {
		return "", &ConfigError{fmt.Errorf("profiles.%s: %w", slug, err)}
	}
	return m, nil
}

func profileList(cfg *config.Config) string {
	if names := cfg.ProfileNames(); len(names) > 0 {
		return strings.Join(names, ", ")
	}
	return "none"
}

// profileFacades holds the facades of the profiles served so far.
type profileFacades struct {
	mu sync.Mutex
	m  map[string]*facade.Facade
}

// ProfileFacade returns the facade serving a profile, made on first use;
// false for a slug the live config does not have.
func (a *App) ProfileFacade(slug string) (*facade.Facade, bool) {
	if slug == a.opts.Profile {
		return a.Facade, slug != ""
	}
	g := a.current()
	mode, err := a.profileMode(g, slug)
	if err != nil {
		return nil, false
	}
	a.profiles.mu.Lock()
	f, ok := a.profiles.m[slug]
	a.profiles.mu.Unlock()
	if ok {
		return f, true
	}
	// Built outside the lock: its first Sync may refresh the registry,
	// whose change listener syncs the profile facades (syncProfiles).
	f = a.newFacade(g, slug, mode)
	a.profiles.mu.Lock()
	defer a.profiles.mu.Unlock()
	if prev, ok := a.profiles.m[slug]; ok {
		return prev, true // another request made it first
	}
	if a.profiles.m == nil {
		a.profiles.m = map[string]*facade.Facade{}
	}
	a.profiles.m[slug] = f
	return f, true
}

// newFacade builds a facade over the live catalog and call path.
func (a *App) newFacade(g *generation, profile string, mode facade.Mode) *facade.Facade {
	f := facade.New(liveCatalog{a}, a.dispatch, facade.Options{
		Mode: mode, Rules: g.rules, Version: Version(), Logger: a.log, SessionID: a.shared.Sessions.New,
		Prompts: prompts.NewDir(g.cfg.Prompts.Dir, a.log), Profile: profile, Access: a.access,
		ScriptsMayMutate: a.scriptsMayMutate,
	})
	srv := f.Server()
	srv.AddReceivingMiddleware(growOnCall)
	srv.AddReceivingMiddleware(redact.Default.Middleware())
	srv.AddSendingMiddleware(redact.Default.SendingMiddleware())
	f.Sync()
	return f
}

// profileFacadesNow lists the profile facades made so far (for syncs).
func (a *App) profileFacadesNow() []*facade.Facade {
	a.profiles.mu.Lock()
	defer a.profiles.mu.Unlock()
	out := make([]*facade.Facade, 0, len(a.profiles.m))
	keys := make([]string, 0, len(a.profiles.m))
	for k := range a.profiles.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, a.profiles.m[k])
	}
	return out
}

// syncProfiles republishes every profile facade (a registry change).
func (a *App) syncProfiles() {
	for _, f := range a.profileFacadesNow() {
		f.Sync()
	}
}

// setProfileRules passes a reload's global rules to every profile facade.
func (a *App) setProfileRules(r policy.Rules) {
	for _, f := range a.profileFacadesNow() {
		f.SetRules(r)
	}
}
