package openapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/toolerr"

	"github.com/agent-tools/agent-tools/internal/redact"
)

// expirySkew renews a login token this long before its JWT exp (30 s; a
// variable for tests).
var expirySkew = func() *atomic.Int64 { var v atomic.Int64; v.Store(int64(30 * time.Second)); return &v }()

// authenticator attaches the configured credential to requests. For a
// login flow it holds the token: logged in on first need, reused until its
// JWT exp (when readable) or the first 401.
type authenticator struct {
	cfg *Auth

	// loginMu serialises logins (one at a time, others wait and reuse the
	// new token); mu guards the fields below and is never held across I/O.
	loginMu sync.Mutex
	mu      sync.Mutex
	token   string
	expiry  time.Time // zero: unknown (kept until a 401)
	logins  int       // how many logins succeeded (tests, doctor)
}

func newAuthenticator(cfg *Auth) *authenticator {
	return &authenticator{cfg: cfg}
}

func (a *authenticator) isLogin() bool { return a.cfg != nil && a.cfg.Login != nil }

// headerNames are the headers the host sets (parameters with these names
// never become arguments).
func (a *authenticator) headerNames() []string {
	switch {
	case a.cfg == nil:
		return nil
	case a.cfg.Bearer != "" || a.cfg.Basic != nil:
		return []string{"Authorization"}
	case a.cfg.Login != nil:
		return []string{a.cfg.Login.Header}
	}
	names := make([]string, 0, len(a.cfg.Header))
	for k := range a.cfg.Header {
		names = append(names, k)
	}
	return names
}

func (a *authenticator) basicValue() string {
	b := a.cfg.Basic
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(b.User+":"+b.Password))
}

// secrets lists the credential values, in every form they are sent.
func (a *authenticator) secrets() []string {
	c := a.cfg
	if c == nil {
		return nil
	}
	var out []string
	add := func(v ...string) {
		for _, s := range v {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	add(c.Bearer)
	for _, v := range c.Header {
		add(v)
	}
	if c.Basic != nil {
		v := a.basicValue()
		add(c.Basic.Password, v, strings.TrimPrefix(v, "Basic "))
	}
	if c.Login != nil {
		for _, v := range c.Login.Body {
			add(v)
		}
		a.mu.Lock()
		add(a.token)
		a.mu.Unlock()
	}
	return out
}

// apply sets the credential on req. login performs the login when the
// flow needs a token; it returns the token used ("" for static auth).
func (a *authenticator) apply(ctx context.Context, req *http.Request, login func(context.Context) (string, time.Time, error)) (string, error) {
	c := a.cfg
	switch {
	case c == nil:
		return "", nil
	case c.Bearer != "":
		req.Header.Set("Authorization", "Bearer "+c.Bearer)
	case c.Basic != nil:
		req.Header.Set("Authorization", a.basicValue())
	case c.Login != nil:
		tok, err := a.current(ctx, login)
		if err != nil {
			return "", err
		}
		req.Header.Set(c.Login.Header, c.Login.TokenPrefix()+tok)
		return tok, nil
	default:
		for k, v := range c.Header {
			req.Header.Set(k, v)
		}
	}
	return "", nil
}

// current returns a valid token, logging in when there is none or it expired.
func (a *authenticator) current(ctx context.Context, login func(context.Context) (string, time.Time, error)) (string, error) {
	valid := func() (string, bool) {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.token, a.token != "" && (a.expiry.IsZero() || time.Now().Add(time.Duration(expirySkew.Load())).Before(a.expiry))
	}
	if tok, ok := valid(); ok {
		return tok, nil
	}
	a.loginMu.Lock()
	defer a.loginMu.Unlock()
	if tok, ok := valid(); ok { // another call logged in meanwhile
		return tok, nil
	}
	tok, exp, err := login(ctx)
	if err != nil {
		return "", err
	}
	// The runtime-wide redactor learns every token the login flow obtains,
	// so an API that echoes it never gets it into a result, log or audit.
	// Shown as "[redacted: login token]": it comes from no variable.
	redact.Add("login token", tok)
	a.mu.Lock()
	a.token, a.expiry = tok, exp
	a.logins++
	a.mu.Unlock()
	return tok, nil
}

// invalidate drops tok after a 401 (unless another call already renewed it).
func (a *authenticator) invalidate(tok string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token == tok {
		a.token, a.expiry = "", time.Time{}
	}
}

// login posts the configured body to the login path and reads the token.
func (p *Provider) login(ctx context.Context) (string, time.Time, error) {
	l := p.opts.Auth.Login
	body, err := json.Marshal(l.Body)
	if err != nil {
		return "", time.Time{}, err
	}
	u := *p.base
	u.Path += l.Path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", time.Time{}, ctx.Err()
		}
		return "", time.Time{}, loginError("the login request failed: %s", p.scrub(errText(err)))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return "", time.Time{}, loginError("login at %s answered HTTP %d: %s", l.Path, resp.StatusCode, excerpt(p.scrub(string(data)), 300))
	}
	var answer any
	if err := json.Unmarshal(data, &answer); err != nil {
		return "", time.Time{}, loginError("login at %s did not answer JSON", l.Path)
	}
	v, ok := pointer(answer, l.Token)
	tok, _ := v.(string)
	if !ok || tok == "" {
		return "", time.Time{}, loginError("login at %s answered no token at %s", l.Path, l.Token)
	}
	return tok, jwtExpiry(tok), nil
}

func loginError(format string, args ...any) error {
	return toolerr.New(toolerr.ProviderUnavailable,
		"The service's login failed: the credentials live in the host environment (auth.login in the config), not in tool arguments. Tell the user; do not retry unchanged.",
		format, args...)
}

// pointer follows a JSON pointer (RFC 6901) into a decoded JSON value.
func pointer(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// jwtExpiry reads the exp claim of a JWT; zero when tok is not one.
func jwtExpiry(tok string) time.Time {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return time.Time{}
	}
	f, err := claims.Exp.Float64()
	if err != nil || f <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(f), 0)
}

// Logins reports how many times the provider logged in (for doctor and tests).
func (p *Provider) Logins() int {
	p.auth.mu.Lock()
	defer p.auth.mu.Unlock()
	return p.auth.logins
}

func excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + fmt.Sprintf("… (%d more characters)", len(r)-n)
	}
	return s
}
