package skills

import (
	"fmt"
	"log/slog"
	"sort"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// CheckRelated validates every skill's related targets against the loaded
// skills of all providers (a target "prefix:name" must name Provider:Name of
// one of them). Each unknown target is logged at warn (when log is not nil)
// and returned as a "warning" diagnostic; it is never fatal: related is
// discoverability metadata, and the link is still shown.
func CheckRelated(all []catalog.Skill, log *slog.Logger) []provider.Diagnostic {
	known := make(map[string]bool, len(all))
	for _, s := range all {
		known[s.Provider+":"+s.Name] = true
	}
	var out []provider.Diagnostic
	for _, s := range all {
		for _, r := range s.Related {
			if known[r.Target] {
				continue
			}
			reason := fmt.Sprintf("related target %q names no loaded skill", r.Target)
			if log != nil {
				log.Warn("skill related target unknown", "provider", s.Provider, "skill", s.Name, "target", r.Target)
			}
			out = append(out, provider.Diagnostic{Provider: s.Provider, Item: "skill " + s.Name, Status: "warning", Reason: reason})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Item < out[j].Item
	})
	return out
}
