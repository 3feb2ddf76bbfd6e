package console

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/status"
	"github.com/agent-tools/agent-tools/internal/transport"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// LoginStarter is the runtime's optional capability behind the Log in
// button of a needs_login provider (the app has it: the guard is in this
// package's tests).
type LoginStarter interface {
	StartLogin(ctx context.Context, id, redirectURL string, login upstreamauth.LoginFunc) error
}

const (
	// upstreamLoginTimeout bounds a console login, the operator's time in
	// the authorization server's pages included.
	upstreamLoginTimeout = 5 * time.Minute
	// upstreamURLWait bounds the wait for the authorization URL (discovery
	// and registration) before the button's request gives up.
	upstreamURLWait = 30 * time.Second
	callbackPath    = transport.ConsolePath + "/oauth/callback"
)

// upstreamLogins are the console logins waiting for the authorization
// server's answer, by their OAuth state (unguessable, made by the go-sdk's
// flow per login). The callback is found by state, not by the session
// cookie: that cookie is SameSite=Strict and is not sent on the redirect
// back from the authorization server's site.
type upstreamLogins struct {
	mu      sync.Mutex
	pending map[string]chan *auth.AuthorizationResult
}

var pendingLogins upstreamLogins // one per process: serve has one console

func (u *upstreamLogins) add(state string) chan *auth.AuthorizationResult {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending == nil {
		u.pending = map[string]chan *auth.AuthorizationResult{}
	}
	ch := make(chan *auth.AuthorizationResult, 1)
	u.pending[state] = ch
	return ch
}

func (u *upstreamLogins) take(state string) chan *auth.AuthorizationResult {
	u.mu.Lock()
	defer u.mu.Unlock()
	ch := u.pending[state]
	delete(u.pending, state)
	return ch
}

// routesUpstreamLogin adds the login's callback to m (the button's own
// route is in routeTable): the authorization server calls it back with
// the flow's one-time state, not with a console login.
func (c *Console) routesUpstreamLogin(m *http.ServeMux) {
	m.HandleFunc("GET "+callbackPath, c.upstreamCallback)
}

// apiUpstreamLogin is POST /ui/api/providers/{id}/login: it starts the
// provider's login with this console's callback as the redirect and
// answers {"redirect": authorization URL} for the page to open. The flow
// finishes in the background when the authorization server calls back.
func (c *Console) apiUpstreamLogin(w http.ResponseWriter, r *http.Request) {
	ls, ok := c.rt.(LoginStarter)
	if !ok {
		writeJSON(w, http.StatusNotImplemented, errBody("login", "this runtime cannot run logins: use agent-tools auth login"))
		return
	}
	id := r.PathValue("id")
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	redirect := scheme + "://" + r.Host + callbackPath
	urls := make(chan string, 1)
	login := func(ctx context.Context, authURL string) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(authURL)
		if err != nil || u.Query().Get("state") == "" {
			return nil, errors.New("the authorization URL has no state")
		}
		st := u.Query().Get("state")
		got := pendingLogins.add(st)
		defer pendingLogins.take(st)
		select { // a second authorization (step-up) has no page waiting: it waits for its callback only
		case urls <- authURL:
		default:
		}
		select {
		case res := <-got:
			if res.Code == "" {
				return nil, errors.New("the authorization server answered without a code")
			}
			return res, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the browser: %w", ctx.Err())
		}
	}
	done := make(chan error, 1)
	who := callerOf(r.Context()).user
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), upstreamLoginTimeout)
		defer cancel()
		err := ls.StartLogin(ctx, id, redirect, login)
		if err != nil {
			c.log.Warn("console login to an upstream failed", "user", who, "provider", id, "err", redact.String(err.Error()))
		} else {
			c.log.Info("console login to an upstream done", "user", who, "provider", id)
		}
		done <- err
	}()
	select {
	case u := <-urls:
		c.log.Info("console login to an upstream started", "user", who, "provider", id)
		writeJSON(w, http.StatusOK, map[string]string{"redirect": u})
	case err := <-done:
		if err == nil { // the upstream let us in without a login
			writeJSON(w, http.StatusOK, map[string]string{"redirect": transport.ConsolePath + "/"})
			return
		}
		code := http.StatusBadGateway
		if errors.Is(err, status.ErrUnknownProvider) {
			code = http.StatusNotFound
		}
		writeJSON(w, code, errBody("login", err.Error()))
	case <-time.After(upstreamURLWait):
		writeJSON(w, http.StatusGatewayTimeout, errBody("login", "the authorization server did not give a login URL in time"))
	}
}

// upstreamCallback is GET /ui/oauth/callback: the authorization server's
// answer. It hands the code to the waiting login (which exchanges it with
// the PKCE verifier it holds) and shows a page without the code.
func (c *Console) upstreamCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redact.Add("upstream authorization code", q.Get("code"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer") // the URL holds the code
	got := pendingLogins.take(q.Get("state"))
	if got == nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `<!doctype html><p>No login is waiting for this answer (it expired, or was used). <a href="/ui/">Back to the console</a></p>`)
		return
	}
	got <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	if e := q.Get("error"); e != "" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `<!doctype html><p>Login failed: %s. <a href="/ui/">Back to the console</a></p>`, html.EscapeString(redact.String(e)))
		return
	}
	fmt.Fprint(w, `<!doctype html><p>Logged in. The provider restarts with the new login. <a href="/ui/">Back to the console</a></p>`)
}
