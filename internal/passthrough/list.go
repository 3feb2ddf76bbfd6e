package passthrough

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func hasResources(c *sdk.ServerCapabilities) bool { return c.Resources != nil }

// A cursor across several upstreams: which one, and its own cursor.
type multiCursor struct {
	I int    `json:"i"`
	C string `json:"c,omitempty"`
}

func encodeCursor(i int, c string) string {
	b, _ := json.Marshal(multiCursor{I: i, C: c})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, n int) (int, string, error) {
	if s == "" {
		return 0, "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var mc multiCursor
	if err == nil {
		err = json.Unmarshal(b, &mc)
	}
	if err != nil || mc.I < 0 || mc.I >= n {
		return 0, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
	}
	return mc.I, mc.C, nil
}

// listAcross pages through several upstreams: one upstream's cursors pass
// through unchanged; across several, the cursor says which one is next.
func listAcross[T any](ctx context.Context, conns []*upConn, cursor string,
	page func(ctx context.Context, c *upConn, cursor string) ([]T, string, error)) ([]T, string, error) {
	out := []T{}
	switch len(conns) {
	case 0:
		return out, "", nil
	case 1:
		items, next, err := page(ctx, conns[0], cursor)
		if items == nil {
			items = out
		}
		return items, next, err
	}
	i, cur, err := decodeCursor(cursor, len(conns))
	if err != nil {
		return nil, "", err
	}
	for ; i < len(conns); i++ {
		items, next, err := page(ctx, conns[i], cur)
		if err != nil {
			return nil, "", err
		}
		out = append(out, items...)
		if next != "" {
			return out, encodeCursor(i, next), nil
		}
		cur = ""
	}
	return out, "", nil
}

func (ds *downstream) own(key, id string, several bool) {
	if !several {
		return
	}
	ds.mu.Lock()
	ds.owners[key] = id
	ds.mu.Unlock()
}

// listKind is one paginated list the passthrough merges across upstreams:
// resources or resource templates.
type listKind[R any, T any] struct {
	// page lists one page of one upstream.
	page func(ctx context.Context, cs *sdk.ClientSession, cursor string) (res R, items []T, next string, err error)
	// key is the identity an item is routed by later ("" for none).
	key func(T) string
	// merged builds the answer of several upstreams.
	merged func(items []T, next string) R
}

// list pages through the client's upstreams with resources, remembering
// which upstream listed which item (for read, subscribe and completion). One
// upstream's answer is returned as it said it (_meta included).
func list[R any, T any](ctx context.Context, ds *downstream, ups []upstreamRef, cursor string, k listKind[R, T]) (R, error) {
	var zero R
	conns, err := ds.openConns(ctx, ups, hasResources)
	if err != nil {
		return zero, err
	}
	var last R
	lastSet := false
	items, next, err := listAcross(ctx, conns, cursor, func(ctx context.Context, c *upConn, cursor string) ([]T, string, error) {
		res, items, next, err := k.page(ctx, c.cs, cursor)
		if err != nil {
			return nil, "", err
		}
		for _, it := range items {
			if key := k.key(it); key != "" {
				ds.own(key, c.id, len(conns) > 1)
			}
		}
		last, lastSet = res, true
		return items, next, nil
	})
	if err != nil {
		return zero, err
	}
	if len(conns) == 1 && lastSet {
		return last, nil
	}
	return k.merged(items, next), nil
}

func (ds *downstream) listResources(ctx context.Context, ups []upstreamRef, p *sdk.ListResourcesParams) (*sdk.ListResourcesResult, error) {
	if p == nil {
		p = &sdk.ListResourcesParams{}
	}
	return list(ctx, ds, ups, p.Cursor, listKind[*sdk.ListResourcesResult, *sdk.Resource]{
		page: func(ctx context.Context, cs *sdk.ClientSession, cursor string) (*sdk.ListResourcesResult, []*sdk.Resource, string, error) {
			q := *p
			q.Cursor = cursor
			res, err := cs.ListResources(ctx, &q)
			if err != nil {
				return nil, nil, "", err
			}
			return res, res.Resources, res.NextCursor, nil
		},
		key: func(r *sdk.Resource) string {
			if r == nil {
				return ""
			}
			return r.URI
		},
		merged: func(items []*sdk.Resource, next string) *sdk.ListResourcesResult {
			return &sdk.ListResourcesResult{Resources: items, NextCursor: next}
		},
	})
}

func (ds *downstream) listTemplates(ctx context.Context, ups []upstreamRef, p *sdk.ListResourceTemplatesParams) (*sdk.ListResourceTemplatesResult, error) {
	if p == nil {
		p = &sdk.ListResourceTemplatesParams{}
	}
	return list(ctx, ds, ups, p.Cursor, listKind[*sdk.ListResourceTemplatesResult, *sdk.ResourceTemplate]{
		page: func(ctx context.Context, cs *sdk.ClientSession, cursor string) (*sdk.ListResourceTemplatesResult, []*sdk.ResourceTemplate, string, error) {
			q := *p
			q.Cursor = cursor
			res, err := cs.ListResourceTemplates(ctx, &q)
			if err != nil {
				return nil, nil, "", err
			}
			return res, res.ResourceTemplates, res.NextCursor, nil
		},
		key: func(t *sdk.ResourceTemplate) string {
			if t == nil {
				return ""
			}
			return t.URITemplate
		},
		merged: func(items []*sdk.ResourceTemplate, next string) *sdk.ListResourceTemplatesResult {
			return &sdk.ListResourceTemplatesResult{ResourceTemplates: items, NextCursor: next}
		},
	})
}
