package upstreamauth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// observer is the transport of discovery, registration and token requests.
// It notes the issuer of the authorization server metadata the flow used
// (for auth status), and adds the resource parameter (RFC 8707) to refresh
// requests, which oauth2 sends without it.
type observer struct {
	base     http.RoundTripper
	resource string

	mu  sync.Mutex
	iss string
}

func (o *observer) issuer() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.iss
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil && o.resource != "" &&
		strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		b, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if v, err := url.ParseQuery(string(b)); err == nil && v.Get("grant_type") == "refresh_token" && v.Get("resource") == "" {
			v.Set("resource", o.resource)
			b = []byte(v.Encode())
		}
		req = req.Clone(req.Context())
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := o.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || req.Method != http.MethodGet {
		return resp, err
	}
	p := req.URL.Path
	if !strings.Contains(p, "/.well-known/oauth-authorization-server") && !strings.Contains(p, "/.well-known/openid-configuration") {
		return resp, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var m struct {
		Issuer string `json:"issuer"`
	}
	if json.Unmarshal(b, &m) == nil && m.Issuer != "" {
		o.mu.Lock()
		o.iss = m.Issuer
		o.mu.Unlock()
	}
	return resp, nil
}
