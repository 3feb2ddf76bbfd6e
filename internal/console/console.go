// Package console is the operator's console served at /ui by `serve --http`:
// server-rendered pages (html/template, every asset embedded, one small
// script, nothing from another origin) and the JSON API under /ui/api/ that
// the pages use and scripts can too. It shows what the runtime shows the
// model: the providers' state, the same search index with its scores, the
// tools' schemas, a call through the same pipeline, and the audit tail;
// and it lets an operator switch providers on and off, restart an
// upstream, and watch per-provider calls, errors and latency.
package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/status"
	"github.com/agent-tools/agent-tools/internal/transport"
)

//go:embed assets
var assets embed.FS

// Runtime is what the console needs of the running app (serve passes its
// *app.App; the guard is in this package's tests, the app sits below).
type Runtime interface {
	Status() status.Status
	SetEnabled(ctx context.Context, id string, on bool) error
	Restart(ctx context.Context, id string) error
	Registry() *registry.Registry
	Call(ctx context.Context, req *pipeline.Request) *pipeline.Response
	SubscribeAudit() (recent [][]byte, lines <-chan []byte, cancel func())
	// Gate is the live access decision: every console route asks it
	// (gate.go), as every other door does.
	Gate() *policy.Gate
}

// ActivitySource is where the Activity page's charts come from: the
// runtime's metrics over the last minutes (metrics.Window), with the step
// in progress so a call shows at the page's next refresh.
type ActivitySource interface {
	Live(now time.Time) metrics.Activity
}

var _ ActivitySource = (*metrics.Window)(nil)

// TokenSource is where the Activity page's result-token totals come from:
// per tool and per identity, since start and over the last minutes
// (metrics.Tokens, kept by the metrics middleware).
type TokenSource interface {
	Totals(now time.Time) metrics.TokenTotals
}

var _ TokenSource = (*metrics.Tokens)(nil)

// Options configure the console.
type Options struct {
	// Runtime is the app whose state the console shows and changes.
	Runtime Runtime
	// Approvals, when set, is the queue of calls waiting for a person
	// (policy.confirm: human); its Middleware must be in the pipeline.
	Approvals *Approvals
	// Activity, when set, feeds the Activity page's per-provider charts
	// (serve passes the metrics.Window it samples); without it the page
	// shows the audit tail only.
	Activity ActivitySource
	// Tokens, when set, feeds the Activity page's result-token totals
	// (serve passes its metrics' Tokens()).
	Tokens TokenSource
	// Done, when closed (serve's shutdown), ends the live audit streams,
	// which would otherwise hold the HTTP shutdown open.
	Done <-chan struct{}
	// Logger receives logins and toggles (never a token).
	Logger *slog.Logger
	// SessionTTL bounds a login session (0 = DefaultSessionTTL).
	SessionTTL time.Duration
	// Sessions, when set, keeps the login sessions in the replicas' shared
	// state (server.redis), so that a browser behind a load balancer stays
	// logged in on whichever replica it lands; nil keeps them in memory.
	Sessions state.Store
	// SessionKey keys the shared entries (a key derived from the cluster
	// key): an entry's name is an HMAC of the cookie, so the store never
	// holds a cookie and nobody without the key can plant a session.
	SessionKey []byte
	// Now is the clock (tests).
	Now func() time.Time
}

// DefaultSessionTTL is how long a console login lasts.
const DefaultSessionTTL = 12 * time.Hour

// Console is the /ui handler.
type Console struct {
	opts   Options
	rt     Runtime
	log    *slog.Logger
	mux    *http.ServeMux
	pages  map[string]*template.Template
	static http.Handler

	mu          sync.Mutex
	verify      transport.TokenVerifier // the transport's token check (login form)
	authEnabled bool                    // tokens/OIDC configured at the transport
	loginToken  string                  // the one-time link's token; "" once used
	sessions    map[string]*session
}

var _ http.Handler = (*Console)(nil)

// New builds the console. It issues the one-time login token at once;
// LoginPath returns the link to print.
func New(o Options) (*Console, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Sessions != nil && len(o.SessionKey) < 32 {
		return nil, errors.New("console: shared sessions need a 32-byte SessionKey")
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	c := &Console{opts: o, rt: o.Runtime, log: o.Logger, pages: pages, sessions: map[string]*session{},
		static: http.StripPrefix(transport.ConsolePath+"/static/", http.FileServerFS(static))}
	c.loginToken = randomToken()
	c.routes()
	return c, nil
}

// SetTokenVerifier implements the transport's optional capability: the
// login form checks a token exactly as /mcp does.
func (c *Console) SetTokenVerifier(v transport.TokenVerifier, authEnabled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.verify, c.authEnabled = v, authEnabled
}

// LoginPath is the one-time login link's path and query ("" once it was
// used, or when the transport has tokens: then the login page asks for one).
func (c *Console) LoginPath() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.authEnabled || c.loginToken == "" {
		return ""
	}
	return transport.ConsolePath + "/login?token=" + c.loginToken
}

func (c *Console) routes() {
	m := http.NewServeMux()
	p := transport.ConsolePath
	m.HandleFunc("GET "+p+"/login", c.loginPage)
	m.HandleFunc("POST "+p+"/login", c.loginForm)
	m.Handle("GET "+p+"/static/", c.static)
	m.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, p+"/", http.StatusFound) })
	for _, rt := range c.routeTable() {
		h := rt.handler
		switch {
		case rt.page:
			h = c.page(rt.action, h)
		default:
			h = c.api(rt.action, h)
		}
		m.HandleFunc(rt.pattern, h)
	}
	c.routesUpstreamLogin(m)
	c.mux = m
}

// route is one authenticated console route and what it asks the gate.
type route struct {
	pattern string
	action  routeAction
	page    bool // an HTML page (else a JSON API endpoint)
	handler http.HandlerFunc
}

// routeTable lists every authenticated route with the access it needs:
// the gate's Administer for everything that shows or changes the runtime
// (every identity's audit, every tool's schema, providers, pins), nothing
// more than a login for a call (the pipeline's gate decides it as for any
// door) and for logging out; an approval is decided per call (apiAnswer).
func (c *Console) routeTable() []route {
	p := transport.ConsolePath
	return []route{
		{"GET " + p + "/{$}", administer, true, c.providersPage},
		{"GET " + p + "/tools", administer, true, c.toolsPage},
		{"GET " + p + "/tools/{name}", administer, true, c.toolPage},
		{"GET " + p + "/activity", administer, true, c.activityPage},
		{"GET " + p + "/approvals", administer, true, c.approvalsPage},
		{"GET " + p + "/pins", administer, true, c.pinsPage}, // pins.go
		{"GET " + p + "/api/approvals", administer, false, c.apiApprovals},
		{"POST " + p + "/api/approvals/{id}", approveEach, false, c.apiAnswer},
		{"POST " + p + "/logout", loggedIn, false, c.logout},
		{"GET " + p + "/api/providers", administer, false, c.apiProviders},
		{"POST " + p + "/api/providers/{id}/login", administer, false, c.apiUpstreamLogin}, // upstreamlogin.go
		{"PUT " + p + "/api/providers/{id}", administer, false, c.apiSetProvider},
		{"POST " + p + "/api/providers/{id}/restart", administer, false, c.apiRestart},
		{"GET " + p + "/api/activity", administer, false, c.apiActivity},
		{"GET " + p + "/api/tools", administer, false, c.apiTools},
		{"GET " + p + "/api/tools/{name}", administer, false, c.apiTool},
		{"POST " + p + "/api/call", loggedIn, false, c.apiCall},
		{"GET " + p + "/api/audit", administer, false, c.apiAudit},
		{"GET " + p + "/api/pins", administer, false, c.apiPins},
		{"POST " + p + "/api/pins/{tool}/approve", administer, false, c.apiApprovePin},
	}
}

// ServeHTTP implements http.Handler: security headers on every answer, and
// every answer scrubbed of the secrets the runtime knows (scrub.go). Only
// the static assets, files embedded in the binary, skip the redactor.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if strings.HasPrefix(r.URL.Path, transport.ConsolePath+"/static/") {
		c.mux.ServeHTTP(w, r)
		return
	}
	sw := &scrubWriter{w: w, set: redact.Default}
	c.mux.ServeHTTP(sw, r)
	sw.finish()
}
