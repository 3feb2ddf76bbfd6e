package transport

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/agent-tools/agent-tools/internal/text"
)

// Browser-facing defences (DNS rebinding, cross-origin requests).
//
// Host: a loopback name is always accepted, so is one listed in
// AllowedHosts ("*" = any). Otherwise the request is refused when it
// reached us on a loopback address (a rebinding attack points a foreign name
// at 127.0.0.1) or when AllowedHosts is set; a server bound to a public
// address with no AllowedHosts accepts any Host (auth is mandatory there).
//
// Origin: absent (non-browser clients) is accepted; otherwise it must be a
// loopback origin or listed in AllowedOrigins ("*" = any). Accepted browser
// origins get CORS headers, and their preflight requests are answered.

type hostPolicy struct {
	any      bool
	allowed  map[string]bool // lower-case host or host:port
	loopBind bool
}

func newHostPolicy(allowed []string, addr string) hostPolicy {
	p := hostPolicy{allowed: map[string]bool{}, loopBind: IsLoopbackAddr(addr)}
	for _, h := range allowed {
		if h == "*" {
			p.any = true
		}
		p.allowed[strings.ToLower(h)] = true
	}
	return p
}

func (p hostPolicy) check(r *http.Request) error {
	host := strings.ToLower(r.Host)
	if host == "" {
		return fmt.Errorf("missing Host header")
	}
	if isLoopbackHost(hostOnly(host)) || p.any || p.allowed[host] || p.allowed[hostOnly(host)] {
		return nil
	}
	viaLoopback := false
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		viaLoopback = IsLoopbackAddr(la.String())
	}
	if viaLoopback || p.loopBind || len(p.allowed) > 0 {
		//nolint:staticcheck // ST1005: "Host" is the header's name, written as HTTP spells it
		return fmt.Errorf("Host %q is not allowed (DNS-rebinding defence); list it in server.http.allowedHosts", clipHeader(r.Host))
	}
	return nil
}

type originPolicy struct {
	any     bool
	allowed map[string]bool // normalised scheme://host[:port]
}

func newOriginPolicy(allowed []string) (originPolicy, error) {
	p := originPolicy{allowed: map[string]bool{}}
	for _, o := range allowed {
		if o == "*" {
			p.any = true
			continue
		}
		n, ok := normaliseOrigin(o)
		if !ok {
			return p, fmt.Errorf("transport: invalid allowed origin %q: want scheme://host[:port]", o)
		}
		p.allowed[n] = true
	}
	return p, nil
}

// normaliseOrigin lower-cases scheme and host and drops a default port.
func normaliseOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(o, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// check returns whether a present Origin is acceptable.
func (p originPolicy) check(origin string) error {
	if p.any {
		return nil
	}
	n, ok := normaliseOrigin(origin)
	if ok {
		u, _ := url.Parse(n)
		if isLoopbackHost(u.Hostname()) || p.allowed[n] {
			return nil
		}
	}
	//nolint:staticcheck // ST1005: "Origin" is the header's name, written as HTTP spells it
	return fmt.Errorf("Origin %q is not allowed; list it in server.http.allowedOrigins", clipHeader(origin))
}

// guard applies the Host and Origin checks, CORS headers and preflights.
func (h *HTTP) guard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h.hosts.check(r); err != nil {
			infoOf(r).reason = "host"
			httpError(w, http.StatusForbidden, "Forbidden: "+err.Error())
			return
		}
		origin := r.Header.Get("Origin")
		if origin == "" {
			next(w, r)
			return
		}
		if err := h.origins.check(origin); err != nil {
			infoOf(r).reason = "origin"
			httpError(w, http.StatusForbidden, "Forbidden: "+err.Error())
			return
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Add("Vary", "Origin")
		hd.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After")
		if r.Method == http.MethodOptions {
			hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			hd.Set("Access-Control-Allow-Headers", allowHeaders(r.Header.Values("Access-Control-Request-Headers")))
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next(w, r)
	}
}

// corsHeaders are the request headers a browser client may send: the
// session versions' and the per-request version's (Mcp-Method, Mcp-Name,
// and an Mcp-Param-<name> per tool argument its schema maps to a header).
const corsHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name"

// allowHeaders answers a preflight's Access-Control-Request-Headers:
// corsHeaders, plus the Mcp-Param-* headers it asks for (their names depend
// on the tools, so they cannot be listed ahead).
func allowHeaders(requested []string) string {
	out, n := corsHeaders, 0
	for _, v := range requested {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if len(name) > len("mcp-param-") && len(name) <= 128 && strings.EqualFold(name[:len("mcp-param-")], "mcp-param-") && token(name) && n < 64 {
				out += ", " + name
				n++
			}
		}
	}
	return out
}

// token reports whether s is an HTTP header name (RFC 9110 token).
func token(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// clipHeader makes a header value safe to echo in an error: printable ASCII,
// at most 100 characters.
func clipHeader(s string) string {
	s = s[:min(len(s), 101)] // one more than is kept: Clip then says it cut
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c >= 0x7f {
			b[i] = '?'
		}
	}
	return text.Clip(string(b), 100)
}
