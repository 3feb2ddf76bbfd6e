package upstreamauth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/agent-tools/agent-tools/internal/redact"
)

// observer is the transport of discovery, registration and token requests.
// It notes the issuer of the authorization server metadata the flow used
// (for auth status), and adds the resource parameter (RFC 8707) to refresh
// requests, which oauth2 sends without it.
//
// It also carries the 2025-03-26 back-compat path the go-sdk lacks: a
// server with no Protected Resource Metadata is its own authorization
// server, its metadata at the root of its origin; servers of that
// revision publish an issuer with a path (their endpoints' prefix), which
// the SDK's RFC 8414 issuer check rejects against the bare origin. Only in
// that case (no PRM seen, metadata at the origin's root, issuer on the same
// origin) is the issuer read as the origin.
type observer struct {
	base     http.RoundTripper
	resource string

	mu       sync.Mutex
	iss      string
	prmFound bool
	cimd     bool // the metadata says client_id_metadata_document_supported
}

func (o *observer) issuer() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.iss
}

// supportsCIMD reports whether the authorization server's metadata said it
// accepts Client ID Metadata Documents.
func (o *observer) supportsCIMD() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cimd
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil && o.resource != "" &&
		strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		b, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		v, err := url.ParseQuery(string(b))
		if err == nil {
			// Every secret of a token request is known to the redactor
			// before anything can print it (an error quoting the request).
			for _, k := range []string{"code", "code_verifier", "client_secret", "refresh_token", "client_assertion", "assertion", "subject_token"} {
				redact.Add("upstream "+strings.ReplaceAll(k, "_", " "), v.Get(k))
			}
			if v.Get("grant_type") == "refresh_token" && v.Get("resource") == "" {
				v.Set("resource", o.resource)
				b = []byte(v.Encode())
			}
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
	prm := strings.Contains(p, "/.well-known/oauth-protected-resource")
	asm := strings.Contains(p, "/.well-known/oauth-authorization-server") || strings.Contains(p, "/.well-known/openid-configuration")
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var m struct {
		Issuer  string   `json:"issuer"`
		Servers []string `json:"authorization_servers"`
		CIMD    bool     `json:"client_id_metadata_document_supported"`
	}
	if json.Unmarshal(b, &m) != nil {
		return resp, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if prm || len(m.Servers) > 0 {
		o.prmFound = true
	}
	if !asm || m.Issuer == "" {
		return resp, nil
	}
	o.iss, o.cimd = m.Issuer, m.CIMD
	origin := req.URL.Scheme + "://" + req.URL.Host
	if !o.prmFound && p == "/.well-known/oauth-authorization-server" && m.Issuer != origin && strings.HasPrefix(m.Issuer, origin+"/") {
		var doc map[string]any
		if json.Unmarshal(b, &doc) == nil {
			doc["issuer"] = origin
			if nb, err := json.Marshal(doc); err == nil {
				resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(nb)), int64(len(nb))
				resp.Header.Del("Content-Length")
			}
		}
	}
	return resp, nil
}
