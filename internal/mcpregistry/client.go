package mcpregistry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultURL is the official registry.
const DefaultURL = "https://registry.modelcontextprotocol.io"

// Client reads one or more registries, in order (a private one first):
// for a name, the first registry that has it wins.
type Client struct {
	// Registries are base URLs (without /v0.1).
	Registries []string
	// HTTP is the client (nil: a client with a 20s timeout).
	HTTP *http.Client
	// Cache keeps every answer for offline use (nil: no cache).
	Cache *Cache
	// UserAgent is sent with every request.
	UserAgent string
}

// Notice is something the person should know about an answer: a
// registry that could not be reached (and the cache that was used
// instead), or entries dropped because they broke the schema.
type Notice struct {
	Registry string
	Text     string
}

func (n Notice) String() string { return n.Registry + ": " + n.Text }

// ErrNotFound means no registry has the server (or the version).
var ErrNotFound = errors.New("not found")

// UnreachableError is a registry that could not be reached and had no
// cached answer.
type UnreachableError struct {
	Registry string
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("registry %s is unreachable (%v) and nothing is cached for this request", e.Registry, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Query is a search of /v0.1/servers.
type Query struct {
	Search       string
	Cursor       string
	Limit        int
	UpdatedSince time.Time
	// Version is "latest", an exact version, or "" (every version).
	Version string
}

func (q Query) values() url.Values {
	v := url.Values{}
	if q.Search != "" {
		v.Set("search", q.Search)
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if !q.UpdatedSince.IsZero() {
		v.Set("updated_since", q.UpdatedSince.UTC().Format(time.RFC3339))
	}
	if q.Version != "" {
		v.Set("version", q.Version)
	}
	return v
}

// Page lists one page of one registry.
func (c *Client) Page(ctx context.Context, base string, q Query) (*List, []Notice, error) {
	body, notes, err := c.get(ctx, base, "/v0.1/servers", q.values())
	if err != nil {
		return nil, notes, err
	}
	l, bad, err := DecodeList(body)
	if err != nil {
		return nil, notes, fmt.Errorf("registry %s: %w", base, err)
	}
	for _, b := range bad {
		notes = append(notes, Notice{base, "skipped an entry: " + b.Error()})
	}
	for i := range l.Servers {
		l.Servers[i].Registry = base
	}
	return l, notes, nil
}

// Search returns the servers matching q (following cursors up to max
// entries per registry; 0: 500), one entry per server name: the first
// registry's. An unreachable registry without a cache is a notice as long
// as another registry answered.
func (c *Client) Search(ctx context.Context, q Query, max int) ([]Entry, []Notice, error) {
	if max <= 0 {
		max = 500
	}
	var out []Entry
	var notes []Notice
	owner := map[string]string{} // server name -> the registry that has it first
	seen := map[string]bool{}
	var firstErr error
	answered := 0
	for _, base := range c.registries() {
		qq := q
		n := 0
		ok := true
		for {
			l, ns, err := c.Page(ctx, base, qq)
			notes = append(notes, ns...)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				notes = append(notes, Notice{base, err.Error()})
				ok = false
				break
			}
			for _, e := range l.Servers {
				if o, had := owner[e.Server.Name]; had && o != base {
					continue // an earlier registry has this name
				}
				owner[e.Server.Name] = base
				key := e.Server.Name + "@" + e.Server.Version
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, e)
				n++
			}
			if l.Metadata.NextCursor == "" || n >= max || len(l.Servers) == 0 {
				break
			}
			qq.Cursor = l.Metadata.NextCursor
		}
		if ok {
			answered++
		}
	}
	if answered == 0 && firstErr != nil {
		return nil, notes, firstErr
	}
	return out, notes, nil
}

// Get returns one version of a server ("" or "latest": the latest) from
// the first registry that has it. The answer must be the server and the
// version asked for: a registry that answers with another is refused.
func (c *Client) Get(ctx context.Context, name, version string) (*Entry, []Notice, error) {
	if version == "" {
		version = "latest"
	}
	var notes []Notice
	var firstErr error
	for _, base := range c.registries() {
		body, ns, err := c.get(ctx, base, "/v0.1/servers/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil)
		notes = append(notes, ns...)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			notes = append(notes, Notice{base, err.Error()})
			continue
		}
		e, err := DecodeEntry(body)
		if err != nil {
			return nil, notes, fmt.Errorf("registry %s: %w", base, err)
		}
		if e.Server.Name != name {
			return nil, notes, fmt.Errorf("registry %s answered for %q with server %q: refused", base, name, clip(e.Server.Name))
		}
		if version != "latest" && e.Server.Version != version {
			return nil, notes, fmt.Errorf("registry %s answered for %s@%s with version %q: refused", base, name, version, clip(e.Server.Version))
		}
		e.Registry = base
		return e, notes, nil
	}
	if firstErr != nil {
		return nil, notes, firstErr
	}
	at := ""
	if version != "latest" {
		at = "@" + version
	}
	return nil, notes, fmt.Errorf("%s%s: %w in %s", name, at, ErrNotFound, strings.Join(c.registries(), ", "))
}

// Versions lists every version of a server in the first registry that
// has it (newest first, as the registry orders them).
func (c *Client) Versions(ctx context.Context, name string) ([]Entry, []Notice, error) {
	var notes []Notice
	var firstErr error
	for _, base := range c.registries() {
		body, ns, err := c.get(ctx, base, "/v0.1/servers/"+url.PathEscape(name)+"/versions", nil)
		notes = append(notes, ns...)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			notes = append(notes, Notice{base, err.Error()})
			continue
		}
		l, bad, err := DecodeList(body)
		if err != nil {
			return nil, notes, fmt.Errorf("registry %s: %w", base, err)
		}
		for _, b := range bad {
			notes = append(notes, Notice{base, "skipped an entry: " + b.Error()})
		}
		var out []Entry
		for _, e := range l.Servers {
			if e.Server.Name != name {
				notes = append(notes, Notice{base, fmt.Sprintf("skipped %q listed among the versions of %q", clip(e.Server.Name), name)})
				continue
			}
			e.Registry = base
			out = append(out, e)
		}
		if len(out) == 0 {
			continue
		}
		return out, notes, nil
	}
	if firstErr != nil {
		return nil, notes, firstErr
	}
	return nil, notes, fmt.Errorf("%s: %w in %s", name, ErrNotFound, strings.Join(c.registries(), ", "))
}

func (c *Client) registries() []string {
	if len(c.Registries) == 0 {
		return []string{DefaultURL}
	}
	return c.Registries
}

// get fetches base+path?query, revalidating the cached copy with its ETag.
// When the registry cannot be reached (or answers 5xx) and a cached copy
// exists, that copy is returned with a notice saying so.
func (c *Client) get(ctx context.Context, base, path string, q url.Values) ([]byte, []Notice, error) {
	u := strings.TrimRight(base, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var cached *cacheEntry
	if c.Cache != nil {
		cached = c.Cache.load(u)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("registry %s: %w", base, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	if cached != nil && cached.ETag != "" {
		req.Header.Set("If-None-Match", cached.ETag)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 20 * time.Second}
	}
	fallback := func(why error) ([]byte, []Notice, error) {
		if cached != nil {
			return cached.Body, []Notice{{base, fmt.Sprintf("unreachable (%v); used the cached answer from %s",
				why, cached.Time.Local().Format("2006-01-02 15:04"))}}, nil
		}
		return nil, nil, &UnreachableError{Registry: base, Err: why}
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return fallback(unwrapURL(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && cached != nil:
		return cached.Body, nil, nil
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil, ErrNotFound
	case resp.StatusCode >= 500:
		return fallback(fmt.Errorf("HTTP %d", resp.StatusCode))
	case resp.StatusCode != http.StatusOK:
		return nil, nil, fmt.Errorf("registry %s: HTTP %d for %s", base, resp.StatusCode, path)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocument+1))
	if err != nil {
		return fallback(err)
	}
	if len(body) > MaxDocument {
		return nil, nil, fmt.Errorf("registry %s: %w: answer larger than %d bytes", base, ErrMalformed, MaxDocument)
	}
	if c.Cache != nil {
		c.Cache.store(u, resp.Header.Get("ETag"), body)
	}
	return body, nil, nil
}

// unwrapURL drops the method and URL from a transport error (the URL is
// already named by the notice).
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
