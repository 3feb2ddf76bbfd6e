package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agent-tools/agent-tools/internal/policy"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/redact"
)

// Defaults of the HTTP transport.
const (
	DefaultAddr          = config.DefaultAddr // one definition: the config's default is the transport's
	DefaultBodyLimit     = 4 << 20
	DefaultShutdownGrace = 10 * time.Second
	DefaultRatePerSecond = 50
	DefaultClockSkew     = 30 * time.Second
	// MCPPath is where the Streamable HTTP endpoint is mounted.
	MCPPath = "/mcp"
	// MetadataPath is the OAuth protected-resource metadata (RFC 9728).
	MetadataPath = "/.well-known/oauth-protected-resource"
)

// HTTPOptions configure the Streamable HTTP transport. The zero value of
// every field except Server is a safe default.
type HTTPOptions struct {
	// Server is the MCP server every session connects to.
	Server *sdk.Server
	// Addr is the address the server is bound to (for the Host check and
	// the metadata's default resource URL); "" is DefaultAddr.
	Addr string
	// Stateless serves each request without a session (no Mcp-Session-Id,
	// no server-to-client requests, GET and DELETE answer 405).
	Stateless bool
	// JSONResponse answers POSTs with one application/json body instead of
	// an SSE stream; notifications (progress) then go to the GET stream.
	JSONResponse bool
	// Tokens are the static bearer tokens accepted (compared in constant time).
	Tokens []string
	// TokenNames[i] names Tokens[i] (config's server.http.tokens {name,
	// token}): its identity is then "token:<name>"; "" or missing = the
	// digest identity "token:<8 hex>".
	TokenNames []string
	// TokenUses[i] is Tokens[i]'s use ("" or "mcp"; "console": a person's
	// console login, refused as a bearer token anywhere).
	TokenUses []string
	// OIDC, when Issuer is set, accepts JWTs from that issuer.
	OIDC OIDCOptions
	// ClaimNames lists the JWT claims per-identity rules match on (the live
	// config's; nil = none): of a verified token only these travel with
	// the identity, in TokenInfo.Extra[policy.ClaimsExtraKey].
	ClaimNames func() []string
	// Resource is the public URL of /mcp for the protected-resource metadata
	// ("" = derived from each request).
	Resource string
	// AllowedOrigins are browser origins accepted besides loopback ones ("*" = any).
	AllowedOrigins []string
	// AllowedHosts are Host values accepted besides loopback names ("*" = any).
	AllowedHosts []string
	// BodyLimit is the largest request body in bytes (0 = DefaultBodyLimit).
	BodyLimit int64
	// BodyTimeout is how long a request body may take to arrive, whole
	// (0 = DefaultBodyTimeout; http_body.go).
	BodyTimeout time.Duration
	// RatePerSecond and RateBurst bound requests per caller: per token (its
	// identity, never the token), or per client address when there is no
	// auth and the server is not loopback-only. RatePerSecond 0 is the
	// default (DefaultRatePerSecond, burst twice that); negative disables.
	RatePerSecond float64
	RateBurst     int
	// SessionTimeout closes sessions idle this long (0 = never).
	SessionTimeout time.Duration
	// ShutdownGrace is how long Serve lets in-flight calls finish (0 = DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// Drain tracks and cancels in-flight tool calls on shutdown (its
	// middleware must be in the pipeline); nil waits for HTTP requests only.
	Drain *Drain
	// Metrics, when set, is served at /metrics and counts requests.
	Metrics *metrics.Metrics
	// Ready reports whether the runtime can serve (nil = always).
	Ready func() error
	// Console, when set, is the operator's console, served at /ui behind
	// the same guards and bearer auth as /mcp (see http_console.go).
	Console http.Handler
	// Cluster connects this replica to the others (nil = a single instance).
	Cluster *ClusterOptions
	// Profile returns the MCP server of a configured profile, served at
	// /mcp/p/<slug> (http_profiles.go); Profiles lists the slugs for the
	// 404 of an unknown one. Nil: no profiles.
	Profile  func(slug string) (*sdk.Server, bool)
	Profiles func() []string
	// Logger receives one line per request and the transport's errors.
	Logger *slog.Logger
	// Now is the clock (tests).
	Now func() time.Time
}

// HTTP is the Streamable HTTP front end: /mcp with its guards and auth,
// /healthz, /readyz, /metrics and the protected-resource metadata.
type HTTP struct {
	opts    HTTPOptions
	log     *slog.Logger
	mcp     sdkHandlers // /mcp's; profiles have their own (endpoints)
	eps     endpoints
	mux     *http.ServeMux
	auth    *authenticator
	limits  *limiter
	origins originPolicy
	hosts   hostPolicy

	// failedAuth limits wrong or malformed credentials per client address.
	failedAuth *failLimiter

	draining atomic.Bool
	inPosts  atomic.Int64 // POST /mcp requests in flight
}

// NewHTTP builds the handler. It fails only on options that cannot work
// (an unparsable allowed origin, a missing server).
func NewHTTP(o HTTPOptions) (*HTTP, error) {
	if o.Server == nil {
		return nil, errors.New("transport: HTTPOptions.Server is nil")
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.BodyLimit <= 0 {
		o.BodyLimit = DefaultBodyLimit
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	if o.RatePerSecond == 0 {
		o.RatePerSecond = DefaultRatePerSecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	origins, err := newOriginPolicy(o.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	h := &HTTP{opts: o, log: o.Logger, origins: origins, hosts: newHostPolicy(o.AllowedHosts, o.Addr)}
	h.auth = newAuthenticator(o)
	h.failedAuth = newFailLimiter(o.Now)
	if o.RatePerSecond > 0 {
		h.limits = newLimiter(o.RatePerSecond, o.RateBurst, o.Now)
	}
	h.mcp = h.newSDKHandlers(o.Server)
	mux := http.NewServeMux()
	mux.Handle(MCPPath, h.route("mcp", h.guard(h.authenticate(h.serveMCP))))
	mux.Handle(ProfilePath, h.route("mcp_profile", h.guard(h.authenticate(h.serveProfile))))
	mux.Handle("/healthz", h.route("healthz", http.HandlerFunc(h.healthz)))
	mux.Handle("/readyz", h.route("readyz", http.HandlerFunc(h.readyz)))
	if o.Metrics != nil {
		mux.Handle("/metrics", h.route("metrics", h.guard(h.authenticate(o.Metrics.Handler().ServeHTTP))))
	}
	if o.Console != nil {
		h.mountConsole(mux, o.Console)
	}
	if h.auth.enabled() {
		meta := h.route("metadata", http.HandlerFunc(h.metadata))
		mux.Handle(MetadataPath, meta)
		mux.Handle(MetadataPath+MCPPath, meta)
	} else { // say why there is none rather than a bare 404
		none := h.route("metadata", http.HandlerFunc(noMetadata))
		mux.Handle(MetadataPath, none)
		mux.Handle(MetadataPath+MCPPath, none)
	}
	mux.Handle("/", h.route("other", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpError(w, http.StatusNotFound, "not found: the MCP endpoint is "+MCPPath)
	})))
	h.mux = mux
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// AuthEnabled reports whether inbound auth is configured.
func (h *HTTP) AuthEnabled() bool { return h.auth.enabled() }

// Sessions counts the connected MCP sessions of /mcp, and the 2026-07-28
// requests in flight there (each has a session object while it runs, a
// subscriptions/listen stream for as long as it listens).
func (h *HTTP) Sessions() int {
	n := 0
	for range h.opts.Server.Sessions() {
		n++
	}
	return n
}

// serveMCP is /mcp once guards and auth passed.
func (h *HTTP) serveMCP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent) // CORS preflight, answered by guard
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" && !validSessionID(id) {
		httpError(w, http.StatusBadRequest, "invalid Mcp-Session-Id header: want visible ASCII characters only")
		return
	}
	perRequest := h.opts.Stateless || h.perRequest(r)
	if r.Method == http.MethodPost {
		if !h.batchAllowed(w, r) {
			return
		}
		if r.ContentLength > h.opts.BodyLimit {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", h.opts.BodyLimit))
			return
		}
		if h.draining.Load() && (h.opts.Stateless || r.Header.Get("Mcp-Session-Id") == "") {
			w.Header().Set("Retry-After", "1")
			httpError(w, http.StatusServiceUnavailable, "server is shutting down")
			return
		}
		msg, ok := h.screenBody(w, r) // http_body.go: what the SDK would answer wrongly, or never
		if !ok {
			return
		}
		if !perRequest {
			ok, pr := h.sessionRequired(w, r, msg) // http_session.go
			if !ok {
				return
			}
			perRequest = pr
		}
		h.inPosts.Add(1)
		defer h.inPosts.Add(-1)
	}
	if c := h.opts.Cluster; c != nil && c.Node != nil {
		w.Header().Set(HeaderReplica, c.Node.ID)
	}
	hs := h.handlerFor(r) // http_profiles.go: each endpoint its own sessions
	if perRequest {
		// No session: any replica serves it, nothing to route or register.
		hs.perRequest.ServeHTTP(w, r)
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" && !h.routeSession(w, r, id) {
		return
	}
	hs.sessions.ServeHTTP(w, r)
	h.registerSession(w, r)
}

// validSessionID accepts what the MCP spec allows: visible ASCII (0x21–0x7E).
func validSessionID(id string) bool {
	if len(id) > 256 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

func (h *HTTP) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintln(w, "ok")
}

// metadata serves RFC 9728 protected-resource metadata so that MCP clients
// can find the authorization server.
func (h *HTTP) metadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		httpError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	md := map[string]any{
		"resource":                 h.resourceURL(r),
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "agent-tools",
	}
	if iss := h.opts.OIDC.Issuer; iss != "" {
		md["authorization_servers"] = []string{iss}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	json.NewEncoder(w).Encode(md)
}

// resourceURL is the canonical URL of /mcp: the configured one, else built
// from the request (only after the Host check passed).
func (h *HTTP) resourceURL(r *http.Request) string {
	if h.opts.Resource != "" {
		return h.opts.Resource
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if host == "" {
		host = h.opts.Addr
	}
	return (&url.URL{Scheme: scheme, Host: host, Path: MCPPath}).String()
}

func (h *HTTP) metadataURL(r *http.Request) string {
	u, err := url.Parse(h.resourceURL(r))
	if err != nil {
		return ""
	}
	u.Path = MetadataPath + strings.TrimSuffix(u.Path, "/")
	u.RawQuery = ""
	return u.String()
}

// httpError writes a short plain-text error (never echoing credentials).
func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintln(w, redact.String(msg)) // error bodies never carry a secret the runtime knows
}

// route logs and counts each request of one route.
func (h *HTTP) route(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := h.opts.Now()
		rec := &recorder{ResponseWriter: w}
		withBodyDeadline(rec, r, h.opts.BodyTimeout) // http_body.go
		ctx, info := withRequestInfo(r.Context())
		next.ServeHTTP(rec, r.WithContext(ctx))
		code := rec.status()
		if h.opts.Metrics != nil {
			h.opts.Metrics.HTTPRequest(name, r.Method, code)
		}
		if name == "healthz" || name == "readyz" || name == "metrics" {
			if code < 400 {
				return // probes and scrapes would drown the log
			}
		}
		level := slog.LevelDebug // successful requests: one line each would cost a write per call
		switch {
		case code >= 500:
			level = slog.LevelError
		case code >= 400:
			level = slog.LevelWarn
		}
		if !h.log.Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", code),
			slog.Duration("duration", h.opts.Now().Sub(start)), slog.Int64("bytes", rec.bytes),
			slog.String("remote", r.RemoteAddr),
		}
		if sid := rec.Header().Get("Mcp-Session-Id"); sid != "" {
			attrs = append(attrs, slog.String("session", shortID(sid)))
		} else if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			attrs = append(attrs, slog.String("session", shortID(sid)))
		}
		if info.user != "" {
			attrs = append(attrs, slog.String("user", info.user))
		}
		if info.reason != "" {
			attrs = append(attrs, slog.String("reason", info.reason))
		}
		h.log.LogAttrs(ctx, level, "http request", attrs...)
	})
}

// shortID keeps a session id's first 8 characters for logs; a session id is
// half of what it takes to use a session, so it is never logged whole.
func shortID(id string) string {
	if !validSessionID(id) {
		return "(invalid)"
	}
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}

// requestInfo carries what the handlers learned for the request log.
type requestInfo struct {
	user   string        // identity of the caller (never a token)
	claims policy.Claims // its verified claims that rules name (OIDC only)
	person bool          // the login form verified a person's console-only token
	reason string        // why a request was refused
}

type requestInfoKey struct{}

func withRequestInfo(ctx context.Context) (context.Context, *requestInfo) {
	info := &requestInfo{}
	return context.WithValue(ctx, requestInfoKey{}, info), info
}

func infoOf(r *http.Request) *requestInfo {
	if i, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

// recorder captures the status and size of a response. It unwraps for
// http.ResponseController so SSE flushing works through it.
type recorder struct {
	http.ResponseWriter
	code  int
	bytes int64
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// IsLoopbackAddr reports whether a listen address (host:port) binds only
// loopback interfaces. An empty or wildcard host is not loopback.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return isLoopbackHost(host)
}

// isLoopbackHost: localhost, *.localhost, or a loopback IP (no port).
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips an optional port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func retryAfter(d time.Duration) string {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return strconv.Itoa(s)
}
