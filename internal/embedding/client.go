// Package embed is the external-embeddings stage of the search index: a
// client for OpenAI-compatible /v1/embeddings and Ollama /api/embed
// endpoints, an on-disk vector cache keyed by a hash of the embedded text,
// and Store, the index.Semantic implementation that keeps tool vectors
// filled in the background and embeds each query under a short deadline.
// Every failure falls back to the lexical ranking: it is logged once and
// shown by doctor (Store.Diagnostics), never returned to a search.
package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// API is the wire format of an embeddings endpoint.
type API int

const (
	OpenAI API = iota // POST {model, input: [...]} → {data: [{index, embedding}]}
	Ollama            // POST {model, input: [...]} → {embeddings: [[...]]}
)

// ErrBadURL: the endpoint URL is not one this client speaks.
var ErrBadURL = errors.New("embeddings url must be an http(s) endpoint ending in /api/embed (Ollama) or /embeddings (OpenAI-compatible, e.g. /v1/embeddings)")

// ParseEndpoint checks an endpoint URL and tells its API by its path.
func ParseEndpoint(raw string) (API, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, ErrBadURL
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/api/embed"):
		return Ollama, nil
	case strings.HasSuffix(p, "/embeddings"):
		return OpenAI, nil
	}
	return 0, ErrBadURL
}

// Client calls one embeddings endpoint with one model.
type Client struct {
	url     string
	label   string // scheme://host/path: what errors show (no query, no credentials)
	api     API
	model   string
	headers map[string]string
	http    *http.Client
}

// maxResponse bounds an endpoint's answer.
const maxResponse = 64 << 20

// NewClient returns a client for endpoint (see ParseEndpoint). Header
// values (API keys) are sent, never shown in errors or logs.
func NewClient(endpoint, model string, headers map[string]string, hc *http.Client) (*Client, error) {
	api, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(model) == "" {
		return nil, errors.New("embeddings: model is required")
	}
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	u, _ := url.Parse(endpoint)
	return &Client{url: endpoint, label: u.Scheme + "://" + u.Host + u.Path, api: api, model: model, headers: headers, http: hc}, nil
}

// Model returns the model name.
func (c *Client) Model() string { return c.model }

// Endpoint returns the endpoint without query or credentials.
func (c *Client) Endpoint() string { return c.label }

// Embed returns one vector per text, in order.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, _ := json.Marshal(map[string]any{"model": c.model, "input": texts})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: %w", c.label, ErrBadURL)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its message repeats the full URL
			err = ue.Err
		}
		return nil, fmt.Errorf("embeddings %s: %w", c.label, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: reading the answer: %w", c.label, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{Endpoint: c.label, Code: resp.StatusCode}
	}
	if len(raw) > maxResponse {
		return nil, fmt.Errorf("embeddings %s: answer larger than %d bytes", c.label, maxResponse)
	}
	vecs, err := decodeVectors(c.api, raw, len(texts))
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: %w", c.label, err)
	}
	return vecs, nil
}

// StatusError is a non-200 answer (the body is not kept: it may echo the
// request).
type StatusError struct {
	Endpoint string
	Code     int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("embeddings %s: HTTP %d %s", e.Endpoint, e.Code, http.StatusText(e.Code))
}

// decodeVectors parses an endpoint's answer for n inputs.
func decodeVectors(api API, raw []byte, n int) ([][]float32, error) {
	var vecs [][]float32
	switch api {
	case Ollama:
		var r struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("malformed answer: %w", err)
		}
		vecs = r.Embeddings
	default:
		var r struct {
			Data []struct {
				Index     *int      `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("malformed answer: %w", err)
		}
		vecs = make([][]float32, len(r.Data))
		for i, d := range r.Data {
			j := i
			if d.Index != nil {
				j = *d.Index
			}
			if j < 0 || j >= len(vecs) || vecs[j] != nil {
				return nil, fmt.Errorf("malformed answer: bad or repeated index %d", j)
			}
			vecs[j] = d.Embedding
		}
	}
	if len(vecs) != n {
		return nil, fmt.Errorf("%d vectors for %d inputs", len(vecs), n)
	}
	for _, v := range vecs {
		if len(v) == 0 || len(v) != len(vecs[0]) {
			return nil, errors.New("vectors are empty or of different lengths")
		}
	}
	return vecs, nil
}
