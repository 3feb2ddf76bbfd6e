package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/secrets"
)

// dialHTTP connects over Streamable HTTP, falling back to the legacy
// HTTP+SSE transport (2024-11-05) when that fails; the transport that worked
// is tried first next time.
func (p *Provider) dialHTTP(ctx context.Context, client *sdk.Client, s *session) error {
	var challenged *challengeSeen // oauth.go
	if p.opts.OAuth == nil {
		challenged = &challengeSeen{}
	}
	hc := &http.Client{Transport: &upstreamHTTP{
		base:       http.DefaultTransport.(*http.Transport).Clone(),
		headers:    p.opts.Headers,
		max:        int64(p.opts.MaxMessageBytes),
		report:     p.problem,
		notes:      s.notes,
		challenged: challenged,
	}}
	max := p.opts.MaxMessageBytes
	sctx, cancel := context.WithCancelCause(p.base)
	streamable := func() (*sdk.ClientSession, error) {
		return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: p.opts.URL, HTTPClient: hc, MaxEventSize: max, OAuthHandler: p.opts.OAuth}, s.copts)
	}
	legacy := func() (*sdk.ClientSession, error) {
		sse := &sdk.SSEClientTransport{Endpoint: p.opts.URL, HTTPClient: hc, MaxEventSize: max}
		return client.Connect(ctx, &detachedConnect{inner: sse, life: sctx}, s.copts)
	}
	p.mu.Lock()
	preferSSE := p.legacySSE
	p.mu.Unlock()

	first, second, names := streamable, legacy, [2]string{"streamable-http", "sse"}
	if preferSSE {
		first, second, names = legacy, streamable, [2]string{"sse", "streamable-http"}
	}
	cs, err := first()
	used := names[0]
	if err != nil && challenged != nil && challenged.seen.Load() {
		err = unauthenticated(p.opts.ID)
	}
	if err != nil && ctx.Err() == nil && !needsLogin(err) { // a login is not cured by the other transport
		var err2 error
		cs, err2 = second()
		if err2 != nil {
			cs = nil
			err = p.scrubErr(fmt.Errorf("connecting to %s: %v (%s: %v)", redactURL(p.opts.URL), err, names[1], err2))
		} else {
			err, used = nil, names[1]
		}
	}
	if err != nil {
		cancel(err)
		return err
	}
	p.mu.Lock()
	p.legacySSE = used == "sse"
	p.mu.Unlock()
	s.cs, s.transport, s.ctx, s.cancel = cs, used, sctx, cancel
	return nil
}

// detachedConnect connects inner under life instead of the Connect context:
// the SDK's legacy SSE client runs its event stream (a GET that lasts as long
// as the session) under the context given to Connect, so a start-up deadline
// would cut the session when it expires. The Connect context still bounds the
// connection attempt itself.
type detachedConnect struct {
	inner sdk.Transport
	life  context.Context
}

func (d *detachedConnect) Connect(ctx context.Context) (sdk.Connection, error) {
	attempt, cancel := context.WithCancel(d.life)
	stop := context.AfterFunc(ctx, cancel)
	conn, err := d.inner.Connect(attempt)
	if !stop() { // ctx ended during the attempt
		if err == nil {
			conn.Close()
		}
		return nil, ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return conn, nil // attempt ends with life, when the session ends
}

// upstreamHTTP adds the configured headers to every request, and bounds JSON
// answers: one over max becomes a JSON-RPC error for the call it answers,
// instead of being read whole into memory.
type upstreamHTTP struct {
	base    *http.Transport
	headers map[string]string
	max     int64
	report  func(string, ...any)
	notes   *noteOrder // orders notifications before the answer in a bound call's stream (passthrough sessions)
	// challenged notes a 401 asking for authorization (nil with OAuth set).
	challenged *challengeSeen
}

func (t *upstreamHTTP) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	// Header values from secret references are kept current, and resolved
	// again on a 401 (internal/secrets).
	resp, err := (&secrets.Transport{Base: t.base}).RoundTrip(req)
	if err == nil {
		t.challenged.note(resp)
	}
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		if w := noteWaitOf(req.Context()); mt == "text/event-stream" && t.notes != nil && w != nil {
			resp.Body = &sseNotes{ReadCloser: resp.Body, notes: t.notes, wait: w} // a bound call's stream
		}
		return resp, nil // SSE streams are bounded per event by the SDK (MaxEventSize)
	}
	var data []byte
	if resp.ContentLength <= t.max {
		data, err = io.ReadAll(io.LimitReader(resp.Body, t.max+1))
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
	}
	if resp.ContentLength > t.max || int64(len(data)) > t.max {
		resp.Body.Close() // not drained: the connection is dropped rather than reading megabytes
		why := fmt.Sprintf("the upstream sent an answer over the %s limit", size(t.max))
		id := requestID(req)
		if id == nil {
			t.report("%s; dropped it", why)
			return nil, errors.New(why)
		}
		t.report("%s; failed the call it answered (id %s)", why, id)
		data = errorResponse(id, why)
	} else {
		resp.Body.Close()
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.Header.Set("Content-Length", strconv.Itoa(len(data)))
	return resp, nil
}

// requestID is the raw JSON id of the call a request carries, or nil.
func requestID(req *http.Request) []byte {
	if req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 16<<20))
	if err != nil {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return nil
	}
	r, ok := msg.(*jsonrpc.Request)
	if !ok || !r.IsCall() {
		return nil
	}
	raw, err := json.Marshal(r.ID.Raw())
	if err != nil {
		return nil
	}
	return raw
}

// errorResponse is a JSON-RPC error answer to the call with the raw id.
func errorResponse(raw []byte, why string) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      json.RawMessage(raw),
		"error":   map[string]any{"code": jsonrpc.CodeInternalError, "message": why},
	})
	return b
}
