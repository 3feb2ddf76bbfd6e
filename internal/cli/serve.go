package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/console"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/tokens"
	"github.com/agent-tools/agent-tools/internal/transport"
)

func runServe(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "serve", "serve [--config FILE] [--mode progressive|search|flat|text|code] [--profile SLUG] [--http [--addr HOST:PORT] [--stateless] [--insecure-no-auth] [--no-ui]] [--log-level LEVEL]").withMode()
	f.StringVar(&f.profile, "profile", "", "serve one profile of the config (profiles:) instead of the default view")
	httpMode := f.Bool("http", false, "serve Streamable HTTP at /mcp instead of stdio")
	addr := f.String("addr", "", "HTTP listen address (default server.http.addr, else "+transport.DefaultAddr+")")
	stateless := f.Bool("stateless", false, "HTTP without sessions, for replicas behind a load balancer")
	insecure := f.Bool("insecure-no-auth", false, "allow a non-loopback --addr without inbound auth (something else must protect it)")
	noUI := f.Bool("no-ui", false, "HTTP without the operator's console at /ui")
	logLevel := f.String("log-level", "info", "log level on stderr: debug, info, warn or error")
	pos, ok := f.parse(args)
	if !ok {
		return ExitUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(env.Stderr, "agent-tools: serve takes no arguments (got %q)\n", pos[0])
		return ExitUsage
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(env.Stderr, "agent-tools: invalid --log-level %q: want debug, info, warn or error\n", *logLevel)
		return ExitUsage
	}
	if !*httpMode {
		for _, name := range []string{"addr", "stateless", "insecure-no-auth", "no-ui"} {
			if flagSet(f, name) {
				fmt.Fprintf(env.Stderr, "agent-tools: --%s applies only with --http\n", name)
				return ExitUsage
			}
		}
		return serveStdio(ctx, env, f, level)
	}
	return serveHTTP(ctx, env, f, level, httpFlags{addr: *addr, stateless: *stateless, insecure: *insecure, noUI: *noUI})
}

func flagSet(f *flags, name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

func serveStdio(ctx context.Context, env *Env, f *flags, level slog.Level) int {
	log := stderrLog(env, level)
	tracer, stopTracing := startTracing(ctx, env, log)
	defer stopTracing() // last: after the runtime closed, its calls' spans are flushed
	tokens.Warm()       // the audit's result_tokens are exact from the first calls on (internal/tokens)
	rt, code := loadRuntime(ctx, env, f, log, env.Stderr, tracer)
	if rt == nil {
		return code
	}
	defer proc.SweepAll()  // runs after Close: no process a call started survives the runtime
	defer jsrun.Shutdown() // the warm script processes
	defer rt.Close()
	a := rt.App()
	applyGC(a.Config().Server.GC, os.LookupEnv)
	if err := a.Watch(ctx, 0); err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools: file watcher unavailable, changes need a restart:", err)
	}
	if isTerminal(env.Stdin) {
		banner(env.Stderr, string(a.Mode), a.Config().Path, len(a.Facade.Tools()))
	}
	err := rt.ServeStdio(ctx)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(env.Stderr, "agent-tools: serve:", err)
		return ExitFailed
	}
	return ExitOK
}

type httpFlags struct {
	addr      string
	stateless bool
	insecure  bool
	noUI      bool
}

// serveHTTP serves Streamable HTTP until ctx ends (SIGINT/SIGTERM), then
// shuts down gracefully.
func serveHTTP(ctx context.Context, env *Env, f *flags, level slog.Level, hf httpFlags) int {
	log := slog.New(redact.Default.Handler(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level})))
	cfg, err := app.LoadConfig(app.Options{ConfigPath: f.configPath(env), ProjectDir: env.Dir, Env: env.LookupEnv})
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", errorText(err))
		return ExitUsage
	}
	applyGC(cfg.Server.GC, os.LookupEnv)
	hc := cfg.Server.HTTP
	addr := hf.addr
	if addr == "" {
		addr = hc.Addr
	}
	if addr == "" {
		addr = transport.DefaultAddr
	}
	if err := checkAddr(addr); err != nil {
		fmt.Fprintf(env.Stderr, "agent-tools: invalid --addr %q: %v; want host:port, e.g. %s\n", addr, err, transport.DefaultAddr)
		return ExitUsage
	}
	if !transport.IsLoopbackAddr(addr) && !hc.AuthConfigured() && !hf.insecure {
		fmt.Fprint(env.Stderr, noAuthMessage(addr))
		return ExitUsage
	}

	// Listen before loading anything: a port that is taken fails at once,
	// not after every provider has started.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools: cannot listen:", err)
		return ExitFailed
	}
	defer ln.Close()

	m := metrics.New()
	drain := transport.NewDrain()
	mw := []pipeline.Middleware{m.Middleware(), drain.Middleware()}
	var approvals *console.Approvals
	if !hf.noUI { // a mutating call under confirm: human can wait for a person in the console
		approvals = &console.Approvals{}
		mw = append(mw, approvals.Middleware())
	}
	tracer, stopTracing := startTracing(ctx, env, log)
	defer stopTracing() // last: after the runtime closed, its calls' spans are flushed
	tokens.Warm()       // the audit's result_tokens are exact from the first calls on (internal/tokens)
	rt, code := loadRuntime(ctx, env, f, log, env.Stderr, tracer, mw...)
	if rt == nil {
		return code
	}
	a := rt.App()
	defer proc.SweepAll()  // runs after Close: no process a call started survives the runtime
	defer jsrun.Shutdown() // the warm script processes
	defer a.Close()

	sh := a.Shared()
	node := sh.Node(a.CatalogHash, log)
	node.OnMismatch = func(mm []cluster.Record) {
		if len(mm) > 0 {
			log.Warn("this replica's catalog differs from other replicas'", "replicas", len(mm), "first", mm[0].ID)
		}
	}
	_ = node.Publish(ctx) // before serving: peers see this replica from its first request
	// serve returns only once the record is withdrawn, so that peers never
	// see a stopped replica as alive (its sessions then answer 404, not 421).
	nodeCtx, stopNode := context.WithCancel(ctx)
	nodeDone := make(chan struct{})
	go func() { defer close(nodeDone); node.Run(nodeCtx) }()
	defer func() { stopNode(); <-nodeDone }()
	if st := sh.Status(); st.Shared || st.Degraded {
		log.Info("shared state", "backend", "redis", "replica", sh.Replica, "degraded", st.Degraded)
	}
	ho := a.HTTPOptions()
	ho.Addr, ho.Stateless = addr, hf.stateless || hc.Stateless
	ho.Drain, ho.Metrics, ho.Logger = drain, m, log
	ho.Cluster = &transport.ClusterOptions{Sessions: sh.Sessions, Node: node, Store: sharedStore(sh), Check: sh.Check}
	var con *console.Console
	if !hf.noUI {
		// The calls waiting for a person live in the shared state: with
		// server.redis every replica's console lists and decides them.
		approvals.Share(ctx, sh.Signed, sh.Replica)
		approvals.SetPolicy(func() (bool, time.Duration) {
			pol := a.Config().Policy
			return pol.Confirm == string(policy.ConfirmHuman), pol.ApprovalTimeout.Duration
		})
		// The Activity page's charts: the metrics above, sampled every step
		// into the last minutes (metrics.Window).
		win := metrics.NewWindow(m.Registry(), metrics.WindowOptions{})
		tick := time.NewTicker(metrics.DefaultWindowStep)
		defer tick.Stop()
		winCtx, stopWin := context.WithCancel(ctx) // ends with serve, whichever way it returns
		defer stopWin()
		go win.Run(winCtx, tick.C)
		// With Redis a login holds on every replica: a browser behind the
		// load balancer lands anywhere.
		if con, err = console.New(console.Options{Runtime: a, Approvals: approvals, Activity: win, Tokens: m.Tokens(), Logger: log, Done: ctx.Done(),
			Sessions: sharedStore(sh), SessionKey: sh.Key.Derive("console-sessions")}); err != nil {
			fmt.Fprintln(env.Stderr, "agent-tools:", err)
			return ExitFailed
		}
		ho.Console = con
	}
	h, err := transport.NewHTTP(ho)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitUsage
	}
	m.WatchSessions(h.Sessions)
	m.WatchProviders(func() []metrics.ProviderHealth { return providerHealth(a) })
	if err := h.WarmAuth(ctx); err != nil {
		log.Warn("OIDC issuer not reachable yet; JWTs are refused until it is (static tokens still work)", "err", err)
	}

	if err := a.Watch(ctx, 0); err != nil {
		log.Warn("file watcher unavailable; config and script changes need a restart", "err", err)
	}
	authDesc := "none (loopback only)"
	switch {
	case len(hc.Tokens) > 0 && hc.OIDC.Issuer != "":
		authDesc = "bearer tokens and OIDC"
	case len(hc.Tokens) > 0:
		authDesc = "bearer tokens"
	case hc.OIDC.Issuer != "":
		authDesc = "OIDC"
	case !transport.IsLoopbackAddr(addr):
		authDesc = "NONE (--insecure-no-auth)"
	}
	if con != nil { // before the "serving" line: whoever waits for that one finds the link too
		// On a person's terminal the link goes to stdout, which nothing
		// else writes to over HTTP, apart from the log and audit lines.
		w := env.Stderr
		if env.StdoutTerminal {
			w = env.Stdout
		}
		consoleBanner(w, "http://"+ln.Addr().String(), con.LoginPath())
	}
	log.Info("serving MCP over Streamable HTTP", "url", "http://"+ln.Addr().String()+transport.MCPPath,
		"mode", a.Mode, "tools", len(a.Facade.Tools()), "auth", authDesc, "stateless", hf.stateless || hc.Stateless)
	if err := h.Serve(ctx, ln); err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools: serve:", err)
		return ExitFailed
	}
	return ExitOK
}

// consoleBanner prints where the console is: the one-time login link
// without tokens, else the login page (which asks for a token).
func consoleBanner(w io.Writer, base, login string) {
	if login != "" {
		fmt.Fprintf(w, "agent-tools console: open %s%s (one-time login link; --no-ui turns the console off)\n", base, login)
		return
	}
	fmt.Fprintf(w, "agent-tools console: %s%s/login (log in with one of server.http.tokens)\n", base, transport.ConsolePath)
}

// sharedStore is the store for rate-limit buckets: shared only with Redis
// (in one process the transport's own limiter is exact and cheaper).
func sharedStore(sh *app.Shared) state.Store {
	if sh.Redis == nil {
		return nil
	}
	return sh.Store
}

func providerHealth(a *app.App) []metrics.ProviderHealth {
	var out []metrics.ProviderHealth
	for _, st := range a.Registry().Providers() {
		out = append(out, metrics.ProviderHealth{ID: st.Info.ID, Kind: st.Info.Kind, Up: st.Enabled && st.Err == nil, Tools: st.Tools})
	}
	return out
}

// checkAddr rejects a listen address that cannot work, before any work:
// a usage error, not a failure after every provider has loaded.
func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("not host:port")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	if strings.ContainsAny(host, " /\\") {
		return fmt.Errorf("host %q is not a host name or IP address", host)
	}
	return nil
}

// noAuthMessage explains the refusal to serve a public address anonymously.
func noAuthMessage(addr string) string {
	return fmt.Sprintf(`agent-tools: refusing to serve %s without authentication: anyone who can reach
that address could call your tools. Either configure inbound auth in agent-tools.yaml:

  server:
    http:
      tokens: ["${AGENT_TOOLS_TOKEN}"]    # then: export AGENT_TOOLS_TOKEN=$(openssl rand -hex 32)
      # and/or JWTs from your identity provider:
      # oidc: { issuer: https://id.example.com, audience: agent-tools }

or bind a loopback address (--addr %s), or, if something else protects this
address (a private network, an authenticating proxy), pass --insecure-no-auth.
`, addr, transport.DefaultAddr)
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// banner tells a person who ran serve by hand what is going on; an MCP client
// never sees it (stdin is then a pipe, and stdout carries only protocol).
func banner(w io.Writer, mode, cfg string, tools int) {
	if cfg == "" {
		cfg = "none (zero-config: ./.agents/tools and the built-ins)"
	}
	fmt.Fprintf(w, strings.TrimLeft(`
agent-tools is serving MCP over stdio (mode %s, config %s, %d MCP tools).
It speaks JSON-RPC on stdin/stdout and is meant to be started by an MCP client:
  Claude Code:  claude mcp add agent-tools -- agent-tools serve
  .mcp.json:    {"mcpServers": {"agent-tools": {"command": "agent-tools", "args": ["serve"]}}}
Press Ctrl-C to stop.
`, "\n"), mode, cfg, tools)
}
