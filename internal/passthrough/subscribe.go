package passthrough

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// subscribe and unsubscribe are the server's SubscribeHandler and
// UnsubscribeHandler: the subscription lives in the client's own upstream
// session (and is replayed if that session is replaced).
func (pt *Passthrough) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	ups := pt.forwarded()
	if len(ups) == 0 || req.Session == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this server does not support resource subscriptions"}
	}
	ds := pt.downstream(req.Session)
	uri := req.Params.URI
	return ds.route(ctx, ups, uri, func(c *upConn) error {
		if err := c.cs.Subscribe(ctx, req.Params); err != nil {
			return err
		}
		ds.mu.Lock()
		ds.subs[uri] = c.id
		ds.mu.Unlock()
		return nil
	})
}

func (pt *Passthrough) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	ups := pt.forwarded()
	if len(ups) == 0 || req.Session == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this server does not support resource subscriptions"}
	}
	ds := pt.downstream(req.Session)
	uri := req.Params.URI
	err := ds.route(ctx, ups, uri, func(c *upConn) error {
		return c.cs.Unsubscribe(ctx, req.Params)
	})
	if err == nil {
		ds.mu.Lock()
		delete(ds.subs, uri)
		ds.mu.Unlock()
	}
	return err
}

// setLevel records the client's log level and passes it to its open
// upstream sessions (sessions opened later get it when they open).
func (ds *downstream) setLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) {
	ds.mu.Lock()
	ds.level = p.Level
	var open []*upConn
	for _, c := range ds.conns {
		open = append(open, c)
	}
	ds.mu.Unlock()
	for _, c := range open {
		select {
		case <-c.ready:
		default:
			continue // still dialling: it replays the level itself
		}
		if c.cs != nil && !c.dead.Load() && upstreamCaps(c.cs).Logging != nil {
			_ = c.cs.SetLoggingLevel(ctx, p)
		}
	}
}
