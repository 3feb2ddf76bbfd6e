package transport

import (
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http"
	"strings"
	"sync"
)

// ProfilePath prefixes a profile's MCP endpoint: /mcp/p/<slug>.
const ProfilePath = MCPPath + "/p/"

// profileServerKey carries a profile's MCP server from serveProfile to the
// SDK handler's getServer.
type profileServerKey struct{}

// endpoints are the SDK handlers of the profile endpoints, one pair per MCP
// server. Each endpoint has handlers of its own, so its own session table:
// a session created on /mcp/p/ops is unknown to /mcp (and the other way
// round), and a request carrying it there gets the SDK's 404 "session not
// found", which the MCP spec prescribes for an unknown session (the client
// then initializes on the endpoint it meant). One shared handler would hand
// the request to the session's own server: another profile's view.
type endpoints struct {
	mu sync.Mutex
	m  map[*sdk.Server]sdkHandlers
}

// sdkHandlers are one endpoint's two SDK handlers (docs/protocol.md):
// sessions serves the protocol versions up to 2025-11-25 (initialize, then
// Mcp-Session-Id on every request); perRequest serves 2026-07-28 and later,
// where each POST carries its protocol version and capabilities and no
// session exists. With HTTPOptions.Stateless both are the per-request one.
type sdkHandlers struct {
	sessions, perRequest *sdk.StreamableHTTPHandler
}

// newSDKHandlers are the SDK's Streamable HTTP handlers serving srv.
func (h *HTTP) newSDKHandlers(srv *sdk.Server) sdkHandlers {
	perRequest := h.newSDKHandler(srv, true)
	if h.opts.Stateless {
		return sdkHandlers{sessions: perRequest, perRequest: perRequest}
	}
	return sdkHandlers{sessions: h.newSDKHandler(srv, false), perRequest: perRequest}
}

func (h *HTTP) newSDKHandler(srv *sdk.Server, stateless bool) *sdk.StreamableHTTPHandler {
	o := h.opts
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless:      stateless,
		JSONResponse:   o.JSONResponse,
		Logger:         o.Logger,
		SessionTimeout: o.SessionTimeout,
		// The Host check (guard) replaces the SDK's (same rule, plus AllowedHosts).
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        o.BodyLimit,
		// A 2026-07-28 request lives as long as its POST: a client that
		// hung up can no longer get the result, so its call is cancelled
		// (older versions are unaffected: their calls belong to the session).
		PropagateRequestCancellation: true,
	})
}

// handlerFor is the SDK handlers of r's endpoint: its profile's, else /mcp's.
func (h *HTTP) handlerFor(r *http.Request) sdkHandlers {
	srv, ok := r.Context().Value(profileServerKey{}).(*sdk.Server)
	if !ok || srv == h.opts.Server {
		return h.mcp
	}
	h.eps.mu.Lock()
	defer h.eps.mu.Unlock()
	if sh, ok := h.eps.m[srv]; ok {
		return sh
	}
	if h.eps.m == nil {
		h.eps.m = map[*sdk.Server]sdkHandlers{}
	}
	sh := h.newSDKHandlers(srv)
	h.eps.m[srv] = sh
	return sh
}

// servers are the MCP servers with an endpoint so far: /mcp's first.
func (h *HTTP) servers() []*sdk.Server {
	out := []*sdk.Server{h.opts.Server}
	h.eps.mu.Lock()
	defer h.eps.mu.Unlock()
	for s := range h.eps.m {
		out = append(out, s)
	}
	return out
}

// serveProfile is /mcp/p/<slug> once guards and auth passed: the profile's
// own server behind the same checks as /mcp. An unknown slug is a 404 that
// lists the profiles (the caller is authenticated: the names are not news
// to it).
func (h *HTTP) serveProfile(w http.ResponseWriter, r *http.Request) {
	slug := strings.TrimPrefix(r.URL.Path, ProfilePath)
	var srv *sdk.Server
	ok := false
	if h.opts.Profile != nil && slug != "" && !strings.Contains(slug, "/") {
		srv, ok = h.opts.Profile(slug)
	}
	if !ok {
		var names []string
		if h.opts.Profiles != nil {
			names = h.opts.Profiles()
		}
		if names == nil {
			names = []string{}
		}
		if len(slug) > 64 {
			slug = slug[:64]
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]any{
			"error":    "unknown profile " + strings.ToValidUTF8(slug, "?") + ": the profiles are served at " + ProfilePath + "<profile>",
			"profiles": names,
		})
		return
	}
	h.serveMCP(w, r.WithContext(context.WithValue(r.Context(), profileServerKey{}, srv)))
}
