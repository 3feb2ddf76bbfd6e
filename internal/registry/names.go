package registry

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/pins"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/scan"
)

// Options say how the registry names tools (docs/modes.md, "Names") and what it checks
// those names against. The zero value is the default: readable names, the
// 64-character flat limit, no renames, no rules.
type Options struct {
	// Scheme is the naming scheme in force ("" is naming.Readable).
	Scheme naming.Scheme
	// Rename maps provider id → the tool's own name → the name to use
	// instead (config `rename:`), the operator's way out of a collision or
	// of a flat name that is too long.
	Rename map[string]map[string]string
	// FlatMaxNameLength is the longest name flat mode publishes (0: 64).
	FlatMaxNameLength int
	// Deny and Allow are the policy globs; one that matches no loaded tool
	// is a warning in the load log and in Diagnostics.
	Deny, Allow []string
	// Pins, when set, pins every published definition and holds back the
	// tools it names (security.pin: quarantine); see internal/pins.
	Pins Pinner
	// Scan is security.scan ("" is scan.Default, hold-high): the definition
	// scanner's findings go to the pins (shown, audited) and the ones
	// Scan.Holding names hold a tool back until approved. It runs only with
	// Pins set.
	Scan scan.Mode
	// Overrides maps provider id → the tool's own name → the operator's
	// view of it (config `overrides:`), applied as the tool enters the catalog.
	Overrides map[string]map[string]catalog.Override
}

// Pinner is what the registry needs of the pin store (internal/pins).
type Pinner interface {
	// ObserveBatch pins one provider's tools (Canonical, Provider and
	// Digest set) and returns the canonical names to hold back, with why.
	ObserveBatch(b pins.Batch) map[string]string
	// Generation moves when a held tool is approved.
	Generation() uint64
	// DiagnosticsWith are doctor's lines about changed, new and flagged
	// definitions under security.scan mode m.
	DiagnosticsWith(m scan.Mode) []provider.Diagnostic
	// HeldFindings are the findings that hold tool back under m (for its
	// teaching error).
	HeldFindings(tool string, m scan.Mode) []scan.Finding
}

// Scheme is the naming scheme in force.
func (r *Registry) Scheme() naming.Scheme { return r.opts.Scheme }

// FlatMaxNameLength is the longest name flat mode publishes.
func (r *Registry) FlatMaxNameLength() int {
	if r.opts.FlatMaxNameLength > 0 {
		return r.opts.FlatMaxNameLength
	}
	return naming.MaxLen
}

// Verbatim reports whether a provider's tools keep the upstream's names
// exactly: a passthrough (`prefix: ""`) MCP upstream is transparent.
func Verbatim(info catalog.ProviderInfo) bool {
	return info.HostLocal && info.ID != naming.ProviderLocal && info.ID != naming.ProviderBuiltin
}

// canonicalLocked names one tool of a provider under the scheme in force,
// after the operator's rename (renames nil: no rename).
func (r *Registry) canonicalLocked(info catalog.ProviderInfo, tool string, renames map[string]string) (string, error) {
	if n, ok := renames[tool]; ok && n != "" {
		tool = n
	}
	if Verbatim(info) {
		return naming.Verbatim(info.ID, tool)
	}
	return r.opts.Scheme.Canonical(info.ID, tool, info.HostLocal)
}

// Conflict is a tool kept without a canonical name: the name the scheme
// gives it is already taken.
type Conflict struct {
	Tool  catalog.Tool // the tool that lost (Canonical empty)
	Name  string       // the name both want
	Owner catalog.Tool // the tool that keeps it
}

// Reason explains the conflict and its fix, for doctor and errors.
func (c Conflict) Reason() string {
	return fmt.Sprintf("its name %q is already taken by tool %q of provider %q; it cannot be called until the operator renames one of them: add `rename: {%q: <new name>}` %s",
		c.Name, c.Owner.Name, c.Owner.Provider, c.Tool.Name, renameAt(c.Tool.Provider))
}

// renameAt says where a provider's rename: goes in the config: the local
// scripts' under local:, every other provider's in its providers: entry.
func renameAt(id string) string {
	if id == "local" {
		return "under `local:`"
	}
	return fmt.Sprintf("to provider %q", id)
}

// Conflicts lists the tools kept without a name, in provider order.
func (r *Registry) Conflicts() []Conflict {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Conflict
	for _, id := range r.order {
		if e := r.providers[id]; e.enabled {
			out = append(out, e.conflicts...)
		}
	}
	return out
}

// Known clients' limits on a published tool name.
const (
	apiNameLimit = 64 // OpenAI, Gemini, the Anthropic API
	// claudeCodePrefix is how Claude Code names an MCP server's tool, with
	// the server key the setup in docs/clients.md uses.
	claudeCodePrefix = "mcp__agent-tools__"
)

// FlatNameDiagnostics are doctor's lines about names in flat mode: with
// flat, one line per name a client would refuse and what to do about it;
// otherwise one summary line per provider that has such names (they are
// reachable in this mode). The mode is the caller's to say: the registry
// names tools for every mode.
func (r *Registry) FlatNameDiagnostics(flat bool) []provider.Diagnostic {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []provider.Diagnostic
	for _, id := range r.order {
		if e := r.providers[id]; e.enabled {
			out = append(out, r.flatNamesLocked(e, flat)...)
		}
	}
	return out
}

func (r *Registry) flatNamesLocked(e *entry, flat bool) []provider.Diagnostic {
	max := r.FlatMaxNameLength()
	id := e.info.ID
	var out []provider.Diagnostic
	var over, claude int
	for _, t := range e.tools {
		n := len(t.Canonical)
		var broken []string
		if n > max {
			broken = append(broken, fmt.Sprintf("flat mode does not publish it (%d characters, over flat.maxNameLength %d)", n, max))
			over++
		} else if n > apiNameLimit {
			broken = append(broken, fmt.Sprintf("OpenAI, Gemini and the Anthropic API refuse function names over %d characters (it has %d)", apiNameLimit, n))
		}
		if cc := len(claudeCodePrefix) + n; cc > apiNameLimit && n <= max {
			broken = append(broken, fmt.Sprintf("Claude Code names it %s… (%d characters), over the Anthropic API's %d", claudeCodePrefix, cc, apiNameLimit))
			claude++
		}
		if len(broken) == 0 || !flat {
			continue
		}
		out = append(out, provider.Diagnostic{Provider: id, Item: t.Name, Status: "warning",
			Reason: fmt.Sprintf("flat name %q: %s. Fix: add `rename: {%q: <shorter name>}` %s, or use mode progressive or search (names there have no limit)",
				t.Canonical, strings.Join(broken, "; "), t.Name, renameAt(id))})
	}
	if !flat && over+claude > 0 {
		out = append(out, provider.Diagnostic{Provider: id, Item: "names", Status: "ok",
			Reason: fmt.Sprintf("%d tool names are over flat.maxNameLength %d and %d more are too long for Claude Code's flat names; only flat mode publishes tool names, so in this mode every tool is reachable", over, max, claude)})
	}
	return out
}

// RuleWarning is a policy glob that matches no loaded tool.
type RuleWarning struct {
	List    string // "deny" or "allow"
	Pattern string
	// Other names a tool the glob would match under the other scheme.
	Other       string
	otherScheme naming.Scheme
}

func (w RuleWarning) String() string {
	s := fmt.Sprintf("policy.%s rule %q matches no loaded tool, so it protects nothing", w.List, w.Pattern)
	if w.Other != "" {
		s += fmt.Sprintf("; it would match %s (naming: %s): rules use the canonical names of the scheme in force", w.Other, w.otherScheme)
	}
	return s
}

// UnmatchedRules lists the policy globs that match no loaded tool's
// canonical name (tools the scheme could not name are checked by their
// wanted name), saying when one would match under the other scheme.
func (r *Registry) UnmatchedRules(deny, allow []string) []RuleWarning {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.unmatchedRulesLocked(deny, allow)
}

func (r *Registry) unmatchedRulesLocked(deny, allow []string) []RuleWarning {
	var names, others []string
	other := r.opts.Scheme.Other()
	for _, id := range r.order {
		e := r.providers[id]
		if !e.enabled {
			continue
		}
		for _, t := range e.tools {
			names = append(names, t.Canonical)
			if !Verbatim(e.info) {
				if alt, err := other.Canonical(id, t.Name, e.info.HostLocal); err == nil {
					others = append(others, alt)
				}
			}
		}
		for _, c := range e.conflicts {
			names = append(names, c.Name)
		}
	}
	var out []RuleWarning
	for _, list := range []struct {
		name  string
		globs []string
	}{{"deny", deny}, {"allow", allow}} {
		for _, g := range list.globs {
			if slices.ContainsFunc(names, func(n string) bool { ok, _ := path.Match(g, n); return ok }) {
				continue
			}
			w := RuleWarning{List: list.name, Pattern: g, otherScheme: other}
			if i := slices.IndexFunc(others, func(n string) bool { ok, _ := path.Match(g, n); return ok }); i >= 0 {
				w.Other = strconvQuote(others[i])
			}
			out = append(out, w)
		}
	}
	return out
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// logRules logs each unmatched policy rule once per registry.
func (r *Registry) logRules() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.unmatchedRulesLocked(r.opts.Deny, r.opts.Allow) {
		if k := w.List + "\x00" + w.Pattern; !r.ruleWarned[k] {
			r.ruleWarned[k] = true
			r.log.Warn(w.String())
		}
	}
}

// RuleDiagnostics are doctor's lines for the policy globs that match no
// loaded tool.
func (r *Registry) RuleDiagnostics(deny, allow []string) []provider.Diagnostic {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []provider.Diagnostic
	for _, w := range r.unmatchedRulesLocked(deny, allow) {
		out = append(out, provider.Diagnostic{Provider: "policy", Item: w.List + " " + w.Pattern, Status: "warning", Reason: w.String()})
	}
	return out
}
