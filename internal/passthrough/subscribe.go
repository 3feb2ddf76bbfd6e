package passthrough

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// subscribe and unsubscribe are the server's SubscribeHandler and
// UnsubscribeHandler: the subscription lives in the client's own upstream
// session (and is replayed if that session is replaced).
func (pt *Passthrough) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	ds, ups, err := pt.subscriptions(req.Session)
	if err != nil {
		return err
	}
	uri := req.Params.URI
	_, err = gated(ctx, pt, req, Op{Method: "resources/subscribe", Name: uri, Provider: ds.ownerIn(ups, uri), Params: req.Params}, func(ctx context.Context) (*struct{}, error) {
		return nil, ds.route(ctx, ups, uri, func(c *upConn) error {
			if err := c.cs.Subscribe(ctx, req.Params); err != nil {
				return err
			}
			ds.mu.Lock()
			ds.subs[uri] = c.id
			ds.mu.Unlock()
			return nil
		})
	})
	return err
}

func (pt *Passthrough) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	ds, ups, err := pt.subscriptions(req.Session)
	if err != nil {
		return err
	}
	uri := req.Params.URI
	_, err = gated(ctx, pt, req, Op{Method: "resources/unsubscribe", Name: uri, Provider: ds.ownerIn(ups, uri), Params: req.Params}, func(ctx context.Context) (*struct{}, error) {
		return nil, ds.route(ctx, ups, uri, func(c *upConn) error {
			return c.cs.Unsubscribe(ctx, req.Params)
		})
	})
	if err == nil {
		ds.mu.Lock()
		delete(ds.subs, uri)
		ds.mu.Unlock()
	}
	return err
}

// subscriptions is the client's passthrough state and the forwarded
// upstreams, or METHOD_NOT_FOUND when nothing is forwarded.
func (pt *Passthrough) subscriptions(ss *sdk.ServerSession) (*downstream, []upstreamRef, error) {
	ups := pt.forwarded()
	if len(ups) == 0 || ss == nil {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this server does not support resource subscriptions"}
	}
	return pt.downstream(ss), ups, nil
}

// setLevel records the client's log level and passes it to its open
// upstream sessions (sessions opened later get it when they open).
func (ds *downstream) setLevel(ctx context.Context, p *sdk.SetLoggingLevelParams) {
	ds.mu.Lock()
	ds.level = p.Level
	ds.mu.Unlock()
	for _, c := range ds.live() {
		if upstreamCaps(c.cs).Logging != nil {
			_ = c.cs.SetLoggingLevel(ctx, p)
		}
	}
}
