package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// secretDiags: one line per secret reference of the config, its store and
// whether it resolves (the store's words when not); never its value.
func secretDiags(ctx context.Context, cfg *config.Config, r *secrets.Resolver) []provider.Diagnostic {
	var out []provider.Diagnostic
	seen := map[secrets.Ref]bool{}
	for _, u := range cfg.SecretRefs() {
		if seen[u.Ref] {
			continue
		}
		seen[u.Ref] = true
		d := provider.Diagnostic{Provider: "secrets", Item: u.Ref.String(), Status: "ok"}
		where := fmt.Sprintf("%s:%d (%s)", filepath.Base(cfg.Path), u.Pos.Line, u.Path)
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := r.Resolve(rctx, u.Ref)
		cancel()
		if err != nil {
			d.Status = "failed"
			d.Reason = fmt.Sprintf("store %s, used at %s: %s", u.Ref.Store, where, strings.TrimPrefix(err.Error(), u.Ref.String()+": "))
		} else {
			d.Reason = fmt.Sprintf("store %s, used at %s: resolves", u.Ref.Store, where)
		}
		out = append(out, d)
	}
	return out
}

// tokenKeyDiag says where the upstream token store keeps its key (the OS
// keyring, or the file beside it as the fallback), when logins are stored.
func tokenKeyDiag(env *Env) []provider.Diagnostic {
	dir := ""
	if v, ok := env.LookupEnv("XDG_STATE_HOME"); ok && filepath.IsAbs(v) {
		dir = filepath.Join(v, "agent-tools")
	}
	s, err := upstreamauth.NewFileStore(dir)
	if err != nil {
		return nil
	}
	if _, err := os.Stat(s.Path()); err != nil {
		return nil
	}
	loc := s.KeyLocation()
	d := provider.Diagnostic{Provider: "upstream logins", Item: "token store key", Status: "ok", Reason: loc}
	if strings.HasPrefix(loc, "file ") {
		d.Status = "warning"
	}
	return []provider.Diagnostic{d}
}
