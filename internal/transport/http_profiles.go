package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProfilePath prefixes a profile's MCP endpoint: /mcp/p/<slug>.
const ProfilePath = MCPPath + "/p/"

// profileServerKey carries a profile's MCP server from serveProfile to the
// SDK handler's getServer.
type profileServerKey struct{}

// serverFor is the MCP server a new session of r gets: its profile's, or
// the default one.
func (h *HTTP) serverFor(r *http.Request) *mcp.Server {
	if s, ok := r.Context().Value(profileServerKey{}).(*mcp.Server); ok {
		return s
	}
	return h.opts.Server
}

// serveProfile is /mcp/p/<slug> once guards and auth passed: the profile's
// own server behind the same checks as /mcp. An unknown slug is a 404 that
// lists the profiles (the caller is authenticated: the names are not news
// to it).
func (h *HTTP) serveProfile(w http.ResponseWriter, r *http.Request) {
	slug := strings.TrimPrefix(r.URL.Path, ProfilePath)
	var srv *mcp.Server
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
