package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// loginTimeout bounds a login: the person's time in the browser included.
const loginTimeout = 5 * time.Minute

// runAuth is `agent-tools auth login|status|logout`: the logins of HTTP
// upstreams that need the MCP authorization flow. Tokens are kept in the
// user's token store (upstreamauth.FileStore) and never printed.
func runAuth(ctx context.Context, env *Env, args []string) int {
	const use = "Usage: agent-tools auth login <provider> [--config FILE] [--no-browser] | auth status [--config FILE] [--json] | auth logout <provider> [--config FILE]"
	if askedHelp(args) {
		fmt.Fprintln(env.Stdout, use)
		return ExitOK
	}
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, use)
		return ExitUsage
	}
	switch args[0] {
	case "login":
		return authLogin(ctx, env, args[1:])
	case "status":
		return authStatus(env, args[1:])
	case "logout":
		return authLogout(env, args[1:])
	}
	fmt.Fprintln(env.Stderr, use)
	return ExitUsage
}

// tokenStore is the store serve uses: with server.redis in the config, the
// logins in Redis shared by the replicas (sealed under the cluster key);
// else the user's file. where names it in messages (never a URL).
//
// release frees the store's connections. Every write to the store is
// acknowledged when it is made, so an error from closing it (a Redis
// client's pool) changes nothing the command did and is not reported.
func tokenStore(env *Env, f *flags) (store upstreamauth.Store, where string, release func(), err error) {
	dir := ""
	if d, ok := env.LookupEnv("XDG_STATE_HOME"); ok && d != "" {
		dir = d + "/agent-tools"
	}
	if cfg, cerr := app.LoadConfig(app.Options{ConfigPath: f.configPath(env), ProjectDir: env.Dir, Env: env.LookupEnv}); cerr == nil && cfg.Server.Redis.URL != "" {
		s, c, err := app.LoginStore(cfg, env.LookupEnv, dir)
		if err != nil {
			return nil, "", nil, err
		}
		return s, "Redis (server.redis)", func() { _ = c() }, nil
	}
	fs, err := upstreamauth.NewFileStore(dir)
	if err != nil {
		return nil, "", nil, err
	}
	return fs, fs.Path(), func() {}, nil
}

// httpUpstream finds provider id in the config: an HTTP kind mcp entry.
func httpUpstream(env *Env, f *flags, id string) (config.Provider, *mcp.Spec, *config.Config, int) {
	cfg, err := app.LoadConfig(app.Options{ConfigPath: f.configPath(env), ProjectDir: env.Dir, Env: env.LookupEnv})
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", errorText(err))
		return config.Provider{}, nil, nil, ExitUsage
	}
	for _, p := range cfg.Providers {
		if p.ID != id {
			continue
		}
		m, ok := p.Spec.(*mcp.Spec)
		if !ok || m.URL == "" {
			fmt.Fprintf(env.Stderr, "agent-tools: provider %q is not an HTTP kind mcp upstream: nothing to log in to\n", id)
			return p, nil, nil, ExitUsage
		}
		if m.Auth != nil && m.Auth.Type == "client_credentials" {
			fmt.Fprintf(env.Stderr, "agent-tools: provider %q uses client credentials: it needs no login\n", id)
			return p, nil, nil, ExitUsage
		}
		return p, m, cfg, ExitOK
	}
	fmt.Fprintf(env.Stderr, "agent-tools: %s\n", unknownProvider(cfg, id))
	return config.Provider{}, nil, nil, ExitUsage
}

// unknownProvider says that id is no provider of cfg, with the ids that
// are and the closest one.
func unknownProvider(cfg *config.Config, id string) string {
	where := cfg.Path
	if where == "" {
		where = "the zero-config (no agent-tools.yaml here)"
	}
	var ids []string
	for _, p := range cfg.Providers {
		ids = append(ids, p.ID)
	}
	msg := fmt.Sprintf("no provider %q in %s", id, where)
	if len(ids) == 0 {
		return msg + "; it configures no providers"
	}
	msg += "; configured: " + strings.Join(ids, ", ")
	if s := text.Suggest(id, ids); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

func authLogin(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "auth login", "auth login <provider> [--config FILE] [--no-browser]")
	noBrowser := f.Bool("no-browser", false, "print the URL only; do not open a browser")
	pos, ok := f.parse(args)
	if !ok || len(pos) != 1 {
		f.Usage()
		return ExitUsage
	}
	pc, spec, _, code := httpUpstream(env, f, pos[0])
	if spec == nil {
		return code
	}
	store, _, closeStore, err := tokenStore(env, f)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	defer closeStore()
	port := 0
	if spec.Auth != nil {
		port = spec.Auth.RedirectPort
	}
	lb, err := upstreamauth.NewLoopback(port)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	defer lb.Close()
	h, err := mcp.AuthFrom(pc.ID, spec, store, lb.Login(env.Stderr, !*noBrowser), lb.URL, true)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	start := time.Now()
	o := mcp.OptionsFrom(provider.HeaderOf(pc), spec, provider.Deps{Version: "login"})
	o.OAuth, o.StartTimeout, o.ListWait, o.MaxRestarts = h, loginTimeout, loginTimeout, 1
	o.CacheDir = "" // the default cache: the tool list read here is the one serve shows
	p := mcp.New(o)
	defer p.Close()
	if _, err := p.Session(ctx); err != nil {
		// The authorization step that failed says it best, without the
		// transport's wrapping around it.
		var ae *upstreamauth.Error
		if errors.As(err, &ae) {
			err = ae
		} else if le := h.LastError(); le != nil {
			err = le
		}
		fmt.Fprintf(env.Stderr, "agent-tools: login to %s failed: %v\n", pc.ID, err)
		return ExitFailed
	}
	if err := h.SaveError(); err != nil {
		fmt.Fprintf(env.Stderr, "agent-tools: login to %s succeeded, but its tokens could not be saved: %v\n", pc.ID, err)
		return ExitFailed
	}
	e, err := store.Load(pc.ID)
	if err != nil {
		fmt.Fprintf(env.Stderr, "agent-tools: login to %s: reading the saved tokens back: %v\n", pc.ID, err)
		return ExitFailed
	}
	if e == nil {
		fmt.Fprintf(env.Stderr, "agent-tools: %s: the upstream answered without asking for a login; nothing stored\n", pc.ID)
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "Logged in to %s in %s. %s\n", pc.ID, time.Since(start).Round(time.Millisecond), statusLine(e.Status()))
	fmt.Fprintln(env.Stdout, "A running serve picks the login up on its next call to the provider.")
	return ExitOK
}

func statusLine(s upstreamauth.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "issuer %s", orNone(s.Issuer))
	fmt.Fprintf(&b, ", scopes %s", orNone(strings.Join(s.Scopes, " ")))
	if s.Expiry.IsZero() {
		b.WriteString(", no expiry")
	} else {
		fmt.Fprintf(&b, ", expires %s", s.Expiry.Local().Format(time.RFC3339))
		if time.Now().After(s.Expiry) {
			b.WriteString(" (expired")
			if s.Refresh {
				b.WriteString("; refreshed on next use")
			}
			b.WriteString(")")
		}
	}
	if s.Refresh {
		b.WriteString(", refreshable")
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func authStatus(env *Env, args []string) int {
	f := newFlags(env, "auth status", "auth status [--config FILE] [--json]").withJSON()
	if pos, ok := f.parse(args); !ok || len(pos) > 0 {
		f.Usage()
		return ExitUsage
	}
	store, where, closeStore, err := tokenStore(env, f)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	defer closeStore()
	list, err := store.List()
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	if f.json {
		out := []map[string]any{}
		for _, e := range list {
			s := e.Status()
			m := map[string]any{"provider": s.Provider, "issuer": s.Issuer, "scopes": s.Scopes, "refreshable": s.Refresh}
			if !s.Expiry.IsZero() {
				m["expiry"] = s.Expiry.UTC().Format(time.RFC3339)
			}
			out = append(out, m)
		}
		return writeJSON(env.Stdout, out)
	}
	if len(list) == 0 {
		fmt.Fprintf(env.Stdout, "no upstream logins (%s)\n", where)
		return ExitOK
	}
	for _, e := range list {
		fmt.Fprintf(env.Stdout, "%s: %s\n", e.Provider, statusLine(e.Status()))
	}
	return ExitOK
}

func authLogout(env *Env, args []string) int {
	f := newFlags(env, "auth logout", "auth logout <provider> [--config FILE]")
	pos, ok := f.parse(args)
	if !ok || len(pos) != 1 {
		f.Usage()
		return ExitUsage
	}
	store, where, closeStore, err := tokenStore(env, f)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	defer closeStore()
	e, err := store.Load(pos[0])
	if err == nil && e == nil {
		// A login kept for a provider since removed from the config can
		// still be logged out of; a name that is neither is a typo.
		cfg, cerr := app.LoadConfig(app.Options{ConfigPath: f.configPath(env), ProjectDir: env.Dir, Env: env.LookupEnv})
		if cerr != nil {
			fmt.Fprintln(env.Stderr, "agent-tools:", errorText(cerr))
			return ExitUsage
		}
		if _, ok := cfg.Provider(pos[0]); !ok {
			fmt.Fprintf(env.Stderr, "agent-tools: %s\n", unknownProvider(cfg, pos[0]))
			return ExitUsage
		}
		fmt.Fprintf(env.Stdout, "%s was not logged in\n", pos[0])
		return ExitOK
	}
	if err := upstreamauth.Logout(store, pos[0]); err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	fmt.Fprintf(env.Stdout, "logged out of %s (its tokens are deleted from %s)\n", pos[0], where)
	return ExitOK
}
