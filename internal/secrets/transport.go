package secrets

import (
	"io"
	"net/http"
	"strings"

	"github.com/agent-tools/agent-tools/internal/redact"
)

// Transport keeps header values that came from references current: at each
// request a header value holding a resolved value whose cache time is over
// is resolved again (so a rotated token is picked up without a restart),
// and an answer 401 makes it drop the cached values the request carried,
// resolve them again and, when one changed, retry the request once.
// Values from ${VAR} are not touched. Install it under the kind's own
// header-setting transport (mcp headers, openapi auth).
type Transport struct {
	Base http.RoundTripper
}

type carried struct {
	old string
	v   valueOf
}

// carriedRefs lists the resolved values req's headers carry.
func carriedRefs(req *http.Request) []carried {
	valuesMu.Lock()
	defer valuesMu.Unlock()
	if len(values) == 0 {
		return nil
	}
	var out []carried
	seen := map[string]bool{}
	for _, vs := range req.Header {
		for _, hv := range vs {
			for old, v := range values {
				if len(old) >= redact.MinLen && !seen[old] && strings.Contains(hv, old) {
					seen[old] = true
					out = append(out, carried{old: old, v: v})
				}
			}
		}
	}
	return out
}

// update resolves each carried reference (from the cache when fresh) and
// returns req with the new values in its headers, and whether any changed.
// A reference that no longer resolves keeps its last value: the upstream's
// answer (401) is then what the caller sees, not an empty header.
func update(req *http.Request, cs []carried) (*http.Request, bool) {
	changed := false
	var h http.Header
	for _, c := range cs {
		nv, err := c.v.r.Resolve(req.Context(), c.v.ref)
		if err != nil || nv == c.old {
			continue
		}
		if h == nil {
			h = req.Header.Clone()
		}
		for k, vs := range h {
			for i, hv := range vs {
				h[k][i] = strings.ReplaceAll(hv, c.old, nv)
			}
		}
		changed = true
	}
	if !changed {
		return req, false
	}
	req = req.Clone(req.Context())
	req.Header = h
	return req, true
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	cs := carriedRefs(req)
	if len(cs) == 0 {
		return t.base().RoundTrip(req)
	}
	req, _ = update(req, cs)
	resp, err := t.base().RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil // the body cannot be sent twice
	}
	cs = carriedRefs(req)
	for _, c := range cs {
		c.v.r.Invalidate(c.v.ref)
	}
	retry, changed := update(req, cs)
	if !changed {
		return resp, nil
	}
	if req.GetBody != nil {
		body, gerr := req.GetBody()
		if gerr != nil {
			return resp, nil
		}
		retry.Body = body
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return t.base().RoundTrip(retry)
}
