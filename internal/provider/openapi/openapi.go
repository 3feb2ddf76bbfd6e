// Package openapi is provider kind openapi: an OpenAPI 3.0 or 3.1 document
// (JSON or YAML, a file or a URL) becomes one tool per operation, and a call
// becomes one HTTP request under the configured base URL. Credentials stay
// host-side: they are attached to requests and never reach a schema, an
// argument, a result or an error.
package openapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/secrets"
)

// DefaultMaxBody caps a response body read from the API (8 MiB, like a
// process stream); the rest is dropped and the result says so.
const DefaultMaxBody = 8 << 20

// Options configure a provider; Build maps a config entry onto them.
type Options struct {
	// Header is the entry's id, description, confirmation, timeout and
	// read-only operations.
	provider.Header
	// Spec is the document's path or http(s) URL.
	Spec string
	// BaseURL overrides the document's servers[0].
	BaseURL string
	// Headers are sent with every request.
	Headers          map[string]string
	Include, Exclude []string
	Auth             *Auth
	// CacheDir holds fetched documents ("" = os.UserCacheDir()/agent-tools/openapi).
	CacheDir string
	// MaxBody caps response bodies (0 = DefaultMaxBody).
	MaxBody int64
	// Transport carries the requests (nil = a clone of http.DefaultTransport).
	Transport http.RoundTripper
	Log       *slog.Logger
}

// Provider is one OpenAPI service.
type Provider struct {
	opts   Options
	client *http.Client // API calls: redirects only under the base URL
	doc    *http.Client // fetching the document: ordinary redirects
	auth   *authenticator
	// base and title are set once by the load and read without the lock
	// (a redirect check or Info may run while the load holds it).
	baseURL atomic.Pointer[url.URL]
	titleP  atomic.Pointer[string]
	// untrusted is set when the base URL came from a fetched document and
	// lies on another origin than the document: credentials are not sent
	// there (the document does not decide where they go).
	untrusted atomic.Bool

	mu     sync.Mutex
	loaded bool
	err    error
	base   *url.URL
	ops    map[string]*operation
	tools  []catalog.Tool
	diags  []provider.Diagnostic
	// conversions counts documents parsed and converted (not read from
	// the tool cache).
	conversions int
}

var (
	_ provider.Provider  = (*Provider)(nil)
	_ provider.Starter   = (*Provider)(nil)
	_ provider.Diagnoser = (*Provider)(nil)
)

// Build is kind openapi's entry in the runtime's table of provider kinds.
// It reads nothing: the document is loaded by Start (or the first Tools).
func Build(h provider.Header, s config.Spec, deps provider.Deps) (provider.Provider, error) {
	spec, ok := s.(*Spec)
	if !ok {
		return nil, fmt.Errorf("provider %q: not an openapi entry", h.ID)
	}
	cacheDir := deps.CacheDir
	if cacheDir != "" {
		cacheDir = filepath.Join(cacheDir, "openapi")
	}
	return New(Options{
		Header: h, Spec: spec.Spec, BaseURL: spec.BaseURL, Headers: spec.Headers,
		Include: spec.Include, Exclude: spec.Exclude,
		Auth: spec.Auth, CacheDir: cacheDir, Log: deps.Log,
	}), nil
}

// New returns a provider; nothing is read or requested yet.
func New(o Options) *Provider {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	tr := o.Transport
	if tr == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	p := &Provider{opts: o}
	// Credentials from secret references (${keyring:…}, …) are kept current
	// per request, and resolved again on a 401 (internal/secrets).
	tr = &secrets.Transport{Base: tr}
	p.client = &http.Client{Transport: tr, CheckRedirect: p.checkRedirect}
	p.doc = &http.Client{Transport: tr}
	p.auth = newAuthenticator(o.Auth)
	// The runtime's redactor learns the credentials as configured, so that
	// every encoding of them is scrubbed from every output (a config built
	// in code registers nothing else, shown as redact.Redacted; one loaded
	// from a file has already registered them under their variables'
	// names, "[redacted: VAR]", which win).
	for _, sec := range p.Secrets() {
		redact.Add("", sec)
	}
	return p
}

// spec is the document's file or URL as shown to people (its query values
// and password masked).
func (p *Provider) spec() string { return redact.URL(p.opts.Spec) }

// Info implements provider.Provider.
func (p *Provider) Info() catalog.ProviderInfo {
	desc := p.opts.Description
	if t := p.titleP.Load(); desc == "" && t != nil {
		desc = *t
	}
	if desc == "" {
		desc = "REST API described by " + p.spec()
	}
	return catalog.ProviderInfo{ID: p.opts.ID, Kind: "openapi", Description: desc, DiscoverHint: p.opts.DiscoverHint,
		RequireConfirm: p.opts.RequireConfirm, Timeout: p.opts.Timeout}
}

// Start loads the document (a URL is fetched, or read from the cache).
func (p *Provider) Start(ctx context.Context) error {
	_, err := p.load(ctx)
	return err
}

// Tools implements provider.Provider.
func (p *Provider) Tools(ctx context.Context) ([]catalog.Tool, error) {
	if _, err := p.load(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tools), nil
}

// Diagnostics implements provider.Diagnoser: the document, then every
// skipped operation with its reason.
func (p *Provider) Diagnostics() []provider.Diagnostic {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return []provider.Diagnostic{{Provider: p.opts.ID, Item: p.spec(), Status: "failed", Reason: p.scrub(p.err.Error())}}
	}
	if !p.loaded {
		return nil
	}
	return slices.Clone(p.diags)
}

// load reads and converts the document once; a failure is kept (and
// reported) until the next attempt, so an unreachable URL can come back.
func (p *Provider) load(ctx context.Context) (map[string]*operation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loaded {
		return p.ops, nil
	}
	start := time.Now()
	ops, err := p.loadLocked(ctx)
	p.err = err
	if err != nil {
		// At debug: the error is returned on every attempt, and the catalog
		// reports it once per process (doctor has the details).
		p.opts.Log.Debug("openapi document not loaded", "spec", p.spec(), "error", p.scrub(err.Error()))
		return nil, err
	}
	p.opts.Log.Debug("openapi document loaded", "spec", p.spec(), "tools", len(p.tools), "skipped", len(p.diags)-1, "took", time.Since(start))
	return ops, nil
}

func (p *Provider) loadLocked(ctx context.Context) (map[string]*operation, error) {
	data, warning, err := p.readDocument(ctx)
	if err != nil {
		return nil, err
	}
	sel := selection{include: p.opts.Include, exclude: p.opts.Exclude, readonly: p.opts.ReadOnly, authHeaders: p.auth.headerNames()}
	key := p.conversionKey(data, sel)
	var (
		ops     map[string]*operation
		tools   []catalog.Tool
		skipped []provider.Diagnostic
		base    *url.URL
		title   string
	)
	if c, cops, ctools, cbase := p.loadConverted(key); c != nil {
		ops, tools, skipped, base, title = cops, ctools, c.Skipped, cbase, c.Title
	} else {
		doc, err := parseDocument(p.opts.Spec, data)
		if err != nil {
			return nil, err
		}
		if base, err = serverURL(p.opts.Spec, p.opts.BaseURL, doc); err != nil {
			return nil, err
		}
		ops, tools, skipped = buildOperations(p.opts.ID, doc, sel)
		if doc.Info != nil {
			title = clipText(doc.Info.Title, 120)
		}
		p.conversions++
		p.saveConverted(key, base, title, tools, ops, skipped)
	}
	summary := provider.Diagnostic{Provider: p.opts.ID, Item: p.spec(), Status: "ok",
		Reason: fmt.Sprintf("%d operations as tools under %s", len(tools), redact.URL(base.String()))}
	if len(skipped) > 0 {
		summary.Reason += fmt.Sprintf(", %d skipped", len(skipped))
	}
	if warning != "" {
		summary.Status, summary.Reason = "warning", summary.Reason+"; "+warning
	}
	if !p.trustedBase(base) {
		p.untrusted.Store(true)
		if p.hasCredentials() {
			summary.Status = "warning"
			summary.Reason += fmt.Sprintf(`; the credentials are not sent: the document's servers[0] (%s) is on another origin than the document, set "baseURL" in the config to trust it`, redact.URL(base.String()))
		}
	}
	if len(tools) == 0 {
		summary.Status = "warning"
		summary.Reason += " (no operation selected: check include/exclude)"
	}
	p.base, p.ops, p.tools = base, ops, tools
	p.diags = append([]provider.Diagnostic{summary}, skipped...)
	if title != "" {
		p.titleP.Store(&title)
	}
	p.baseURL.Store(base)
	p.loaded = true
	return ops, nil
}

// Secrets returns every secret value the provider holds right now: the
// configured credentials (and the Authorization values built from them),
// the login body's values, the current login token, and the values of
// configured headers whose names say they carry a credential. The runtime's
// redactor scrubs them from everything it writes.
func (p *Provider) Secrets() []string {
	out := p.auth.secrets()
	for k, v := range p.opts.Headers {
		if v != "" && sensitiveHeader(k) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "key", "token", "secret", "cookie", "session", "password", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// trustedBase reports whether the credentials may go to base: it is the
// configured baseURL, or the document is a local file (the user's own), or
// base has the origin the document was fetched from.
func (p *Provider) trustedBase(base *url.URL) bool {
	if p.opts.BaseURL != "" || !strings.Contains(p.opts.Spec, "://") {
		return true
	}
	doc, err := url.Parse(p.opts.Spec)
	return err == nil && strings.EqualFold(doc.Scheme, base.Scheme) && strings.EqualFold(doc.Host, base.Host)
}

// hasCredentials: auth is configured or a configured header carries one.
func (p *Provider) hasCredentials() bool {
	if p.opts.Auth != nil {
		return true
	}
	for k := range p.opts.Headers {
		if sensitiveHeader(k) {
			return true
		}
	}
	return false
}

// scrub replaces every secret in s by its marker, "[redacted: VAR]" (the
// runtime's redactor: every encoding of every known secret), and what is
// left of the provider's own (shorter than the redactor's minimum) by
// redact.Redacted (an API that echoes a header, a transport error that
// quotes a URL).
func (p *Provider) scrub(s string) string {
	s = redact.String(s)
	for _, sec := range p.Secrets() {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, redact.Redacted)
		}
	}
	return s
}

// checkRedirect follows a redirect only while it stays under the base URL.
func (p *Provider) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return fmt.Errorf("stopped after 5 redirects")
	}
	base := p.baseURL.Load()
	if base == nil || !underBase(base, req.URL) {
		return http.ErrUseLastResponse
	}
	return nil
}
