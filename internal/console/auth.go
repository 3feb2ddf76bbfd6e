package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/transport"
)

// CookieName is the console's session cookie.
const CookieName = "agent_tools_console"

// CSRFHeader carries the session's CSRF token on every mutation made with
// the session cookie (bearer-authenticated calls need none: a browser never
// adds an Authorization header on its own).
const CSRFHeader = "X-CSRF-Token"

// ContentSecurityPolicy allows this origin only and no inline script or
// style: the pages load /ui/static/app.js and style.css, nothing else.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

type session struct {
	User    string        `json:"user"`
	Claims  policy.Claims `json:"claims,omitempty"` // the verified claims of the token that logged in (OIDC)
	CSRF    string        `json:"csrf"`
	Expires time.Time     `json:"expires"`
	// Person: the login was a person's, not an agent's credential: the
	// one-time link printed at start, or a console-only token (use:
	// console). Only such a session approves (policy.Caller.Interactive).
	Person bool `json:"person,omitempty"`
}

// sharedKey is a session's entry in the shared store: an HMAC of its
// cookie under Options.SessionKey.
func (c *Console) sharedKey(cookie string) string {
	m := hmac.New(sha256.New, c.opts.SessionKey)
	m.Write([]byte(cookie))
	return "console-session:" + hex.EncodeToString(m.Sum(nil))
}

// lookup finds a live session by its cookie: in the shared store when the
// console has one, else in memory.
func (c *Console) lookup(ctx context.Context, cookie string) (session, bool) {
	if st := c.opts.Sessions; st != nil {
		b, err := st.Get(ctx, c.sharedKey(cookie))
		if err != nil {
			return session{}, false
		}
		var s session
		if json.Unmarshal(b, &s) != nil || s.CSRF == "" || c.opts.Now().After(s.Expires) {
			return session{}, false
		}
		return s, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[cookie]
	if !ok {
		return session{}, false
	}
	if c.opts.Now().After(s.Expires) {
		delete(c.sessions, cookie)
		return session{}, false
	}
	return *s, true
}

// caller is who a console request authenticated as.
type caller struct {
	user   string
	claims policy.Claims
	bearer bool
	csrf   string // the session's CSRF token ("" for bearer callers)
	person bool   // a person's session (session.Person)
}

type callerKey struct{}

func callerOf(ctx context.Context) caller {
	c, _ := ctx.Value(callerKey{}).(caller)
	return c
}

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer") // the login link's token never leaves in a Referer
	h.Set("Cache-Control", "no-store")
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("console: no randomness: " + err.Error()) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// authenticate finds the caller: a bearer identity the transport verified,
// else a live session cookie.
func (c *Console) authenticate(r *http.Request) (caller, bool) {
	if u, ok := transport.BearerUser(r.Context()); ok {
		return caller{user: u, claims: transport.BearerClaims(r.Context()), bearer: true}, true
	}
	ck, err := r.Cookie(CookieName)
	if err != nil || ck.Value == "" {
		return caller{}, false
	}
	s, ok := c.lookup(r.Context(), ck.Value)
	if !ok {
		return caller{}, false
	}
	return caller{user: s.User, claims: s.Claims, csrf: s.CSRF, person: s.Person}, true
}

// page wraps an HTML page: without a login it shows how to get one; a
// login the gate refuses the route's action gets a 403 page that says so.
func (c *Console) page(action routeAction, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		who, ok := c.authenticate(r)
		if !ok {
			c.render(w, http.StatusUnauthorized, "login", c.loginData(""))
			return
		}
		if e := c.refused(who, action); e != nil {
			c.render(w, http.StatusForbidden, "login", c.loginData(e.Message+". "+e.Hint))
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, who)))
	}
}

// api wraps an API endpoint: 401 without a login, 403 for a cookie
// mutation without the session's CSRF token, 403 when the gate refuses the
// route's action to this caller.
func (c *Console) api(action routeAction, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		who, ok := c.authenticate(r)
		if !ok {
			writeJSON(w, http.StatusUnauthorized, errBody("unauthorized", "log in through the link printed at start, or send Authorization: Bearer <token>"))
			return
		}
		if !who.bearer && r.Method != http.MethodGet && r.Method != http.MethodHead {
			got := r.Header.Get(CSRFHeader)
			if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(who.csrf)) != 1 {
				writeJSON(w, http.StatusForbidden, errBody("csrf", "missing or wrong "+CSRFHeader+" header: reload the page"))
				return
			}
		}
		if e := c.refused(who, action); e != nil {
			writeJSON(w, http.StatusForbidden, errBody("forbidden", e.Message+". "+e.Hint))
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, who)))
	}
}

type loginData struct {
	Title       string
	Error       string
	AuthEnabled bool
}

func (c *Console) loginData(msg string) loginData {
	c.mu.Lock()
	defer c.mu.Unlock()
	return loginData{Title: "Log in", Error: msg, AuthEnabled: c.authEnabled}
}

// loginPage is GET /ui/login: with ?token= (the one-time link) it logs in
// and redirects to the console; without, it shows the login page.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if tok == "" {
		c.render(w, http.StatusOK, "login", c.loginData(""))
		return
	}
	c.mu.Lock()
	want := c.loginToken
	valid := want != "" && !c.authEnabled && subtle.ConstantTimeCompare([]byte(tok), []byte(want)) == 1
	if valid {
		c.loginToken = "" // one time: a copied link is worthless afterwards
	}
	c.mu.Unlock()
	if !valid {
		c.render(w, http.StatusUnauthorized, "login", c.loginData("That login link is not valid (it works once). Restart serve for a new one."))
		return
	}
	c.startSession(w, r, policy.ConsoleIdentity, "", true)
}

// loginForm is POST /ui/login with a token field, when the transport has
// tokens: the token is checked as /mcp checks it, once, for a cookie.
func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	verify, enabled := c.verify, c.authEnabled
	c.mu.Unlock()
	if !enabled || verify == nil {
		c.render(w, http.StatusBadRequest, "login", c.loginData("This server has no tokens: use the login link printed at start."))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 32<<10)
	user, err := verify(r, r.PostFormValue("token"))
	if err != nil {
		c.render(w, http.StatusUnauthorized, "login", c.loginData(err.Error()))
		return
	}
	c.startSession(w, r, user, transport.VerifiedClaims(r), transport.VerifiedPerson(r))
}

func (c *Console) startSession(w http.ResponseWriter, r *http.Request, user string, claims policy.Claims, person bool) {
	id := randomToken()
	now := c.opts.Now()
	s := &session{User: user, Claims: claims, CSRF: randomToken(), Expires: now.Add(c.opts.SessionTTL), Person: person}
	if st := c.opts.Sessions; st != nil {
		b, _ := json.Marshal(s)
		if err := st.Put(r.Context(), c.sharedKey(id), b, c.opts.SessionTTL); err != nil {
			c.render(w, http.StatusServiceUnavailable, "login", c.loginData("Cannot record the login: "+err.Error()))
			return
		}
	} else {
		c.mu.Lock()
		for k, s := range c.sessions { // expired ones go as new ones come
			if now.After(s.Expires) {
				delete(c.sessions, k)
			}
		}
		c.sessions[id] = s
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: id, Path: transport.ConsolePath, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(c.opts.SessionTTL / time.Second),
	})
	c.log.Info("console login", "user", user)
	http.Redirect(w, r, transport.ConsolePath+"/", http.StatusSeeOther)
}

// logout ends the cookie session (POST, so it carries the CSRF token).
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(CookieName); err == nil {
		if st := c.opts.Sessions; st != nil {
			_ = st.Delete(r.Context(), c.sharedKey(ck.Value)) // on every replica
		}
		c.mu.Lock()
		delete(c.sessions, ck.Value)
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: transport.ConsolePath, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}
