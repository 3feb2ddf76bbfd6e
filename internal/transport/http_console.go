package transport

import (
	"context"
	"errors"
	"fmt"
	"github.com/agent-tools/agent-tools/internal/policy"
	"net/http"
	"strings"
)

// ConsolePath is where the operator's console (HTTPOptions.Console) is mounted.
const ConsolePath = "/ui"

// TokenVerifier checks a bearer token as /mcp does and returns the
// caller's identity (never the token).
type TokenVerifier func(r *http.Request, token string) (user string, err error)

// consoleAuthSetter is an optional capability of a console handler: it is
// given the transport's token check (for a login form taking a token).
type consoleAuthSetter interface {
	SetTokenVerifier(v TokenVerifier, authEnabled bool)
}

// BearerUser reports the identity a request authenticated as with a bearer
// token at the transport (the console trusts it; a request without one
// must bring the console's own session cookie).
func BearerUser(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(identityKey{}).(identity)
	return id.user, ok && id.user != ""
}

// mountConsole serves the console under /ui behind the same Host and
// Origin guard as /mcp. A request carrying Authorization goes through the
// same bearer check as /mcp (refused when wrong); one without is passed on
// for the console's cookie session.
func (h *HTTP) mountConsole(mux *http.ServeMux, console http.Handler) {
	if s, ok := console.(consoleAuthSetter); ok {
		s.SetTokenVerifier(h.verifyToken, h.auth.enabled())
	}
	bearer := h.authenticate(console.ServeHTTP)
	handler := h.route("ui", h.guard(func(w http.ResponseWriter, r *http.Request) {
		if h.auth.enabled() && r.Header.Get("Authorization") != "" {
			bearer(w, r)
			return
		}
		console.ServeHTTP(w, r)
	}))
	mux.Handle(ConsolePath, handler)
	mux.Handle(ConsolePath+"/", handler)
}

// verifyToken is the console's login-form check: the same verification as
// a bearer token, with the same limit on failed attempts per address.
func (h *HTTP) verifyToken(r *http.Request, tok string) (string, error) {
	ip := clientIP(r)
	if blocked, wait := h.failedAuth.blocked(ip); blocked {
		return "", fmt.Errorf("too many failed authentication attempts from this address: retry after %ss", retryAfter(wait))
	}
	tok = strings.TrimSpace(tok)
	if _, err := ParseBearer("Bearer " + tok); err != nil {
		h.failedAuth.fail(ip)
		return "", errors.New("that is not a token of this server")
	}
	id, ae := h.auth.verify(r.Context(), tok)
	if ae != nil {
		h.failedAuth.fail(ip)
		return "", errors.New("that is not a token of this server")
	}
	infoOf(r).user, infoOf(r).claims, infoOf(r).person = id.user, id.claims, id.person
	return id.user, nil
}

// BearerClaims are the verified claims (those per-identity rules name) of
// the bearer identity of ctx ("" when none or not OIDC): the console asks
// the gate with them, as /mcp's calls do.
func BearerClaims(ctx context.Context) policy.Claims {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id.claims
}

// VerifiedClaims are the claims of the token the request's login form
// verified (TokenVerifier), for the console's cookie session.
func VerifiedClaims(r *http.Request) policy.Claims { return infoOf(r).claims }

// VerifiedPerson reports whether the token the request's login form
// verified is a person's console-only token (use: console): its session
// may give a person's approval; a session opened with an agent's token may
// not.
func VerifiedPerson(r *http.Request) bool { return infoOf(r).person }
