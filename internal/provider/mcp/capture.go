package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
)

// listCapture takes the shared stdio session's tools/list results off the
// wire (stdioConn), so that their tools are decoded once, schemas left as
// the JSON the upstream sent (listedTool), instead of by the SDK (every
// schema into maps, then encoded and decoded again by its x-mcp-header
// check, 32 KiB of decoder buffer per tool) and then encoded again for the
// catalog (fromSDK). At 10,000 tools that was most of a cold start's own
// CPU time, and the SDK's session kept the decoded list (~14 MB) for its
// life (its tools cache, for the 2026-07-28 protocol).
//
// A response to one of our tools/list calls (correlated by its request id)
// whose result decodes is handed to the SDK as a stub: no tools, the same
// nextCursor, and a token in _meta under which listTools takes the page.
// Anything else (an error, a result that does not decode, a response the
// SDK's ListTools did not send) passes untouched, and listTools uses the
// SDK's decoded result as before. Only the shared session captures: a
// passthrough session's lists are its caller's.
type listCapture struct {
	mu    sync.Mutex
	calls map[jsonrpc.ID]struct{}  // our tools/list calls in flight
	pages map[string][]*listedTool // results taken, by token, until listTools takes them
	order []string                 // tokens, oldest first
	seq   uint64
}

// captureMeta is the _meta key of a stub's token.
const captureMeta = "agent-tools/listed"

// Bounds: listing is sequential on the shared session, so one call and one
// page are the norm; these only stop a misbehaving peer from growing them.
const (
	maxCaptureCalls = 8
	maxCapturePages = 4
)

func newListCapture() *listCapture {
	return &listCapture{calls: map[jsonrpc.ID]struct{}{}, pages: map[string][]*listedTool{}}
}

// sent records one of our requests before it is written.
func (c *listCapture) sent(req *jsonrpc.Request) {
	if c == nil || req.Method != "tools/list" || !req.IsCall() {
		return
	}
	c.mu.Lock()
	if len(c.calls) < maxCaptureCalls {
		c.calls[req.ID] = struct{}{}
	}
	c.mu.Unlock()
}

// unsent forgets a request that could not be written.
func (c *listCapture) unsent(req *jsonrpc.Request) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.calls, req.ID)
	c.mu.Unlock()
}

// received looks at a response before the SDK sees it: the result of one
// of our tools/list calls that decodes is kept and replaced by a stub.
func (c *listCapture) received(resp *jsonrpc.Response) {
	if c == nil {
		return
	}
	c.mu.Lock()
	_, ours := c.calls[resp.ID]
	delete(c.calls, resp.ID)
	c.mu.Unlock()
	if !ours || resp.Error != nil || resp.Result == nil {
		return
	}
	tools, cursor, ok := parseToolsList(resp.Result)
	if !ok {
		return // the SDK decodes it, or says why it cannot
	}
	c.mu.Lock()
	c.seq++
	token := strconv.FormatUint(c.seq, 10)
	c.pages[token] = tools
	c.order = append(c.order, token)
	for len(c.order) > maxCapturePages {
		delete(c.pages, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()
	stub, err := json.Marshal(listStub{Tools: []struct{}{}, NextCursor: cursor, Meta: map[string]string{captureMeta: token}})
	if err != nil {
		c.take(token)
		return
	}
	resp.Result = stub
}

type listStub struct {
	Tools      []struct{}        `json:"tools"`
	NextCursor string            `json:"nextCursor,omitempty"`
	Meta       map[string]string `json:"_meta"`
}

var errCaptureLost = errors.New("the tools/list result taken off the wire is gone (more lists in flight than kept)")

// page returns the tools of a result the SDK decoded: the captured page
// when res is a stub, else res's own tools (fromSDK).
func (c *listCapture) page(res *sdk.ListToolsResult) ([]*listedTool, error) {
	if token, ok := res.Meta[captureMeta].(string); ok && c != nil && len(res.Tools) == 0 {
		if tools, ok := c.take(token); ok {
			return tools, nil
		}
		return nil, errCaptureLost
	}
	out := make([]*listedTool, len(res.Tools))
	for i, t := range res.Tools {
		out[i] = fromSDK(t)
	}
	return out, nil
}

func (c *listCapture) take(token string) ([]*listedTool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tools, ok := c.pages[token]
	if ok {
		delete(c.pages, token)
		for i, t := range c.order {
			if t == token {
				c.order = append(c.order[:i], c.order[i+1:]...)
				break
			}
		}
	}
	return tools, ok
}

// parseToolsList decodes a tools/list result as the SDK decodes it into a
// ListToolsResult (the same decoder, case-sensitive names, the same nesting
// limit), keeping each tool's schemas, _meta and icons as JSON. ok is false
// for anything the SDK would refuse or read differently: then the SDK
// decodes it. Indented schemas are compacted (they are served as they are).
func parseToolsList(result []byte) (tools []*listedTool, cursor string, ok bool) {
	if r := bytes.TrimLeft(result, " \t\r\n"); len(r) == 0 || r[0] != '{' {
		return nil, "", false
	}
	var r struct {
		Tools      []*listedTool `json:"tools"`
		NextCursor string        `json:"nextCursor,omitempty"`
	}
	if err := jsonrpcwire.Unmarshal(result, &r); err != nil {
		return nil, "", false
	}
	for _, t := range r.Tools {
		if t == nil {
			continue
		}
		for _, s := range []*json.RawMessage{&t.InputSchema, &t.OutputSchema, &t.Meta, &t.Icons} {
			if string(*s) == "null" {
				*s = nil // as the SDK's decoding into any, then fromSDK, leaves it
			}
			if bytes.IndexByte(*s, '\n') >= 0 {
				var buf bytes.Buffer
				if json.Compact(&buf, *s) != nil {
					return nil, "", false
				}
				*s = buf.Bytes()
			}
		}
	}
	return r.Tools, r.NextCursor, true
}
