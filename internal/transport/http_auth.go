package transport

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/time/rate"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/redact"
)

// OIDCOptions configure JWT bearer validation.
type OIDCOptions struct {
	// Issuer is the OpenID Connect issuer URL ("" disables OIDC). Its
	// discovery document and JWKS are fetched on first use and the keys are
	// re-fetched when a token names an unknown key (rotation).
	Issuer string
	// Audience must be one of the token's "aud" values.
	Audience string
	// ClockSkew tolerates clocks that disagree about "exp" (0 = DefaultClockSkew).
	ClockSkew time.Duration
	// Client fetches discovery and keys (nil = a client with a 10s timeout).
	Client *http.Client
}

// maxTokenLen bounds a bearer token (large JWTs are a few KiB).
const maxTokenLen = 16 << 10

var (
	errNoCredentials = errors.New("no bearer token")
	errMalformed     = errors.New("malformed Authorization header: want \"Bearer <token>\"")
)

// ParseBearer extracts the token from an Authorization header value:
// the case-insensitive scheme "Bearer", one or more spaces, and a token68
// (RFC 6750 §2.1). Anything else is an error; the token is never part of it.
func ParseBearer(header string) (string, error) {
	if header == "" {
		return "", errNoCredentials
	}
	scheme, rest, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", errMalformed
	}
	tok := strings.TrimLeft(rest, " ")
	if tok == "" || len(tok) > maxTokenLen {
		return "", errMalformed
	}
	eq := false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c == '=':
			eq = true // padding: only at the end
		case eq:
			return "", errMalformed
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return "", errMalformed
		}
	}
	if tok[0] == '=' {
		return "", errMalformed
	}
	return tok, nil
}

// authError is a refused credential: code is the RFC 6750 error ("" when no
// credentials were sent), reason the metrics/log word, msg what the client reads.
type authError struct {
	status int
	code   string
	reason string
	msg    string
}

func (e *authError) Error() string { return e.msg }

// identity is who a request authenticated as (never the token itself).
type identity struct {
	user   string // "token:<name or hash prefix>" or "oidc:<issuer>|<sub>"
	expiry time.Time
	claims policy.Claims // the verified claims rules name (OIDC only)
	// person: a console-only token (use: console): a person's login, never
	// a bearer credential.
	person bool
}

type authenticator struct {
	statics [][32]byte // SHA-256 of each static token
	users   []string   // the identity of each: "token:<name>", else "token:" and 8 hex digits of its digest (never the token)
	persons []bool     // each is a person's console-only token (use: console)
	oidc    *oidcVerifier
	claims  func() []string // the claim names rules match on (nil = none)
}

func newAuthenticator(o HTTPOptions) *authenticator {
	a := &authenticator{claims: o.ClaimNames}
	for i, t := range o.Tokens {
		if t != "" {
			name := ""
			if i < len(o.TokenNames) {
				name = o.TokenNames[i]
			}
			a.statics = append(a.statics, sha256.Sum256([]byte(t)))
			a.users = append(a.users, config.TokenIdentity(t, name))
			a.persons = append(a.persons, i < len(o.TokenUses) && o.TokenUses[i] == config.TokenUseConsole)
		}
	}
	if o.OIDC.Issuer != "" {
		a.oidc = newOIDCVerifier(o.OIDC, o.Now)
	}
	return a
}

func (a *authenticator) enabled() bool { return len(a.statics) > 0 || a.oidc != nil }

// verify checks a token: static tokens first (constant time over all of
// them), then, for JWT-shaped tokens, OIDC.
func (a *authenticator) verify(ctx context.Context, tok string) (identity, *authError) {
	sum := sha256.Sum256([]byte(tok))
	match := -1
	for i, s := range a.statics {
		if subtle.ConstantTimeCompare(sum[:], s[:]) == 1 && match < 0 {
			match = i
		}
	}
	if match >= 0 {
		return identity{user: a.users[match], person: a.persons[match]}, nil
	}
	if a.oidc != nil && strings.Count(tok, ".") == 2 {
		var names []string
		if a.claims != nil {
			names = a.claims()
		}
		return a.oidc.verify(ctx, tok, names)
	}
	return identity{}, &authError{status: http.StatusUnauthorized, code: "invalid_token", reason: "invalid_token", msg: "the bearer token is not valid for this server"}
}

// authenticate requires a valid bearer token when auth is configured, then
// applies the rate limit (per identity, or per client address without auth).
func (h *HTTP) authenticate(next http.HandlerFunc) http.HandlerFunc {
	// The SDK binds sessions to TokenInfo.UserID (a session created by one
	// user cannot be used by another); only its middleware can set it, so it
	// is chained with a verifier that returns what we already checked.
	bind := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		id, ok := ctx.Value(identityKey{}).(identity)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		ti := &auth.TokenInfo{UserID: id.user, Expiration: id.expiry}
		if id.claims != "" {
			ti.Extra = map[string]any{policy.ClaimsExtraKey: id.claims}
		}
		return ti, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true, ClockSkew: h.opts.OIDC.ClockSkew + DefaultClockSkew})
	bound := bind(next)
	return func(w http.ResponseWriter, r *http.Request) {
		info := infoOf(r)
		if !h.auth.enabled() {
			// Anonymous callers are limited per address, except on a
			// loopback-only server (the local agents of one user).
			if !h.hosts.loopBind && !h.allow(w, r, "addr:"+clientIP(r)) {
				return
			}
			next(w, r)
			return
		}
		ip := clientIP(r)
		if !h.failedAuthAllowed(w, r, ip) {
			return
		}
		tok, err := ParseBearer(r.Header.Get("Authorization"))
		var ae *authError
		var id identity
		switch {
		case errors.Is(err, errNoCredentials):
			ae = &authError{status: http.StatusUnauthorized, reason: "missing", msg: "authentication required: send Authorization: Bearer <token>"}
		case err != nil:
			ae = &authError{status: http.StatusBadRequest, code: "invalid_request", reason: "malformed", msg: err.Error()}
		default:
			id, ae = h.auth.verify(r.Context(), tok)
			if ae == nil && id.person {
				// A person's console login is no bearer credential: an
				// agent holding it could approve its own calls.
				id, ae = identity{}, &authError{status: http.StatusUnauthorized, code: "invalid_token", reason: "console_only",
					msg: "this token is a person's console login (use: console): log in with it at " + ConsolePath + "/login, it is not accepted as a bearer token"}
			}
		}
		if ae != nil {
			if ae.reason != "missing" { // a client that has not sent a token yet is not guessing
				h.failedAuth.fail(ip)
			}
			info.reason = "auth:" + ae.reason
			if h.opts.Metrics != nil {
				h.opts.Metrics.AuthFailure(ae.reason)
			}
			h.challenge(w, r, ae)
			return
		}
		info.user = id.user
		if !h.allow(w, r, id.user) {
			return
		}
		bound.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
	}
}

type identityKey struct{}

// challenge answers a refused credential with WWW-Authenticate (RFC 6750
// §3, with the RFC 9728 resource_metadata pointer) and a JSON body.
func (h *HTTP) challenge(w http.ResponseWriter, r *http.Request, e *authError) {
	params := []string{`realm="agent-tools"`}
	if e.code != "" {
		params = append(params, fmt.Sprintf(`error=%q`, e.code), fmt.Sprintf(`error_description=%q`, e.msg))
	}
	if u := h.metadataURL(r); u != "" {
		params = append(params, fmt.Sprintf(`resource_metadata=%q`, u))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.status)
	code := e.code
	if code == "" {
		code = "unauthorized"
	}
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": redact.String(e.msg)})
}

// allow applies the rate limit for key; on refusal it has written the 429.
func (h *HTTP) allow(w http.ResponseWriter, r *http.Request, key string) bool {
	if h.limits == nil {
		return true
	}
	ok, wait, shared := h.allowShared(r, key)
	if !shared {
		ok, wait = h.limits.allow(key)
	}
	if ok {
		return true
	}
	infoOf(r).reason = "rate_limited"
	if h.opts.Metrics != nil {
		h.opts.Metrics.RateLimited()
	}
	w.Header().Set("Retry-After", retryAfter(wait))
	httpError(w, http.StatusTooManyRequests, fmt.Sprintf("rate limit exceeded: at most %g requests per second; retry after %s", h.limits.every, retryAfter(wait)+"s"))
	return false
}

func clientIP(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// limiter keeps one token bucket per caller, forgetting idle ones.
type limiter struct {
	every rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

const limiterIdle = 10 * time.Minute

func newLimiter(perSecond float64, burst int, now func() time.Time) *limiter {
	if burst <= 0 {
		burst = int(2 * perSecond)
		if burst < 1 {
			burst = 1
		}
	}
	return &limiter{every: rate.Limit(perSecond), burst: burst, now: now, buckets: map[string]*bucket{}, lastSweep: now()}
}

// allow takes one token for key, or says how long until one is available.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > limiterIdle {
		for k, b := range l.buckets {
			if now.Sub(b.seen) > limiterIdle {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	res := b.lim.ReserveN(now, 1)
	if !res.OK() {
		return false, time.Second
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}

// oidcVerifier discovers the issuer lazily (and again after a failure, at
// most every few seconds), so a server starts while its IdP is down.
type oidcVerifier struct {
	opts OIDCOptions
	now  func() time.Time

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	lastErr  error
	lastTry  time.Time
}

const oidcRetry = 5 * time.Second

func newOIDCVerifier(o OIDCOptions, now func() time.Time) *oidcVerifier {
	if o.ClockSkew <= 0 {
		o.ClockSkew = DefaultClockSkew
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	return &oidcVerifier{opts: o, now: now}
}

func (v *oidcVerifier) get(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier != nil {
		return v.verifier, nil
	}
	if v.lastErr != nil && time.Since(v.lastTry) < oidcRetry {
		return nil, v.lastErr
	}
	v.lastTry = time.Now()
	dctx, cancel := context.WithTimeout(oidc.ClientContext(context.WithoutCancel(ctx), v.opts.Client), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(dctx, v.opts.Issuer)
	if err != nil {
		v.lastErr = fmt.Errorf("OpenID Connect discovery of %s failed: %w", v.opts.Issuer, err)
		return nil, v.lastErr
	}
	skew := v.opts.ClockSkew
	v.verifier = p.Verifier(&oidc.Config{
		ClientID: v.opts.Audience,
		// Tokens a little past "exp" by our clock are still valid (skew).
		Now: func() time.Time { return v.now().Add(-skew) },
	})
	v.lastErr = nil
	return v.verifier, nil
}

// Warm runs discovery now (at start-up) and reports whether it worked.
func (v *oidcVerifier) warm(ctx context.Context) error {
	_, err := v.get(ctx)
	return err
}

// verify checks a JWT; of its claims it keeps those named (see
// policy.SelectClaims), for the per-identity rules.
func (v *oidcVerifier) verify(ctx context.Context, tok string, names []string) (identity, *authError) {
	ver, err := v.get(ctx)
	if err != nil {
		return identity{}, &authError{status: http.StatusServiceUnavailable, code: "temporarily_unavailable", reason: "issuer_unavailable",
			msg: "the authorization server cannot be reached to check the token; retry later"}
	}
	t, err := ver.Verify(ctx, tok)
	if err != nil {
		return identity{}, &authError{status: http.StatusUnauthorized, code: "invalid_token", reason: jwtReason(err), msg: jwtMessage(err, v.opts)}
	}
	// Issuer and subject together: a subject is only unique per issuer.
	id := identity{user: "oidc:" + clipHeader(t.Issuer) + "|" + clipHeader(t.Subject), expiry: t.Expiry}
	if len(names) > 0 {
		var raw map[string]json.RawMessage
		if t.Claims(&raw) == nil {
			id.claims = policy.SelectClaims(raw, names)
		}
	}
	return id, nil
}

func jwtReason(err error) string {
	var exp *oidc.TokenExpiredError
	s := err.Error()
	switch {
	case errors.As(err, &exp):
		return "expired"
	case strings.Contains(s, "audience"):
		return "audience"
	case strings.Contains(s, "issued by a different provider"):
		return "issuer"
	case strings.Contains(s, "signature"):
		return "signature"
	case strings.Contains(s, "nbf"):
		return "not_yet_valid"
	}
	return "invalid_jwt"
}

// jwtMessage explains a rejected JWT without echoing any of it.
func jwtMessage(err error, o OIDCOptions) string {
	switch jwtReason(err) {
	case "expired":
		return "the token has expired; get a new one"
	case "audience":
		return fmt.Sprintf("the token's audience does not include %q", o.Audience)
	case "issuer":
		return fmt.Sprintf("the token was not issued by %s", o.Issuer)
	case "signature":
		return "the token's signature does not verify against the issuer's keys"
	case "not_yet_valid":
		return "the token is not valid yet (nbf)"
	}
	return "the token is not a valid JWT from " + o.Issuer
}

// WarmAuth runs OIDC discovery now, so a misconfigured issuer shows in the
// start-up log instead of on the first request. It never fails the server.
func (h *HTTP) WarmAuth(ctx context.Context) error {
	if h.auth.oidc == nil {
		return nil
	}
	return h.auth.oidc.warm(ctx)
}
