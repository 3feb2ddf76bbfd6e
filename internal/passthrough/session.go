package passthrough

import (
	"context"
	"errors"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"sync"
	"sync/atomic"
)

// downstream is one client session's passthrough state.
type downstream struct {
	pt *Passthrough
	ss *sdk.ServerSession

	mu       sync.Mutex
	closed   bool
	conns    map[string]*upConn    // by provider id
	level    sdk.LoggingLevel      // the client's last logging/setLevel
	subs     map[string]string     // subscribed URI → provider id
	owners   map[string]string     // URI or URI template → provider id (learned from lists)
	flights  []*flight             // tool calls in flight, oldest first
	progress map[string]*flight    // upstream progress token → call
	relayed  map[string]relayedTok // progress token given to the client → upstream's
}

// upConn is the upstream session of one downstream session and provider.
type upConn struct {
	id    string
	up    Upstream      // the provider it was opened on (a reload replaces it)
	ready chan struct{} // closed once cs or err is set
	cs    *sdk.ClientSession
	err   error
	dead  atomic.Bool
}

// flight is a forwarded tool call in flight.
type flight struct {
	ctx     context.Context // the downstream request's (routes relays to its stream)
	token   any             // the client's progress token, if any
	upToken string          // the token the upstream sees
	meta    sdk.Meta        // _meta sent upstream
}

type relayedTok struct {
	conn  *upConn
	token any
}

func (pt *Passthrough) downstream(ss *sdk.ServerSession) *downstream {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if ds := pt.sessions[ss]; ds != nil {
		return ds
	}
	ds := &downstream{pt: pt, ss: ss, conns: map[string]*upConn{}, subs: map[string]string{},
		owners: map[string]string{}, progress: map[string]*flight{}, relayed: map[string]relayedTok{}}
	pt.sessions[ss] = ds
	go func() {
		_ = ss.Wait()
		pt.mu.Lock()
		delete(pt.sessions, ss)
		pt.mu.Unlock()
		ds.close()
	}()
	return ds
}

// live returns the client's upstream sessions that are open. Those still
// dialling are left out: they replay the log level and subscriptions, and
// ask for the roots, themselves once open.
func (ds *downstream) live() []*upConn {
	ds.mu.Lock()
	conns := make([]*upConn, 0, len(ds.conns))
	for _, c := range ds.conns {
		conns = append(conns, c)
	}
	ds.mu.Unlock()
	out := conns[:0]
	for _, c := range conns {
		select {
		case <-c.ready:
			if c.cs != nil && !c.dead.Load() {
				out = append(out, c)
			}
		default:
		}
	}
	return out
}

// close ends the downstream session's upstream sessions.
func (ds *downstream) close() {
	ds.mu.Lock()
	ds.closed = true
	conns := ds.conns
	ds.conns = map[string]*upConn{}
	ds.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

func (c *upConn) close() {
	<-c.ready
	if c.cs != nil {
		_ = c.cs.Close()
	}
}

var errSessionEnded = errors.New("the client session has ended")

// newProtocol is the first protocol version without sessions (SEP-2575):
// no server-to-client requests, log levels and subscriptions per request.
const newProtocol = "2026-07-28"

// sessionful reports whether the client speaks a protocol with sessions,
// where the passthrough keeps one upstream session per client.
func sessionful(ss *sdk.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip == nil || ip.ProtocolVersion < newProtocol
}

var readyNow = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// conn returns the downstream session's upstream session for r, opening it
// on first use (or after the previous one ended, or a reload replaced the
// provider). A client of the sessionless protocol has nothing to keep per
// session, and gets the provider's shared session.
func (ds *downstream) conn(ctx context.Context, r upstreamRef) (*upConn, error) {
	if !sessionful(ds.ss) {
		cs, err := r.pt.Session(ctx)
		if err != nil {
			return nil, err
		}
		return &upConn{id: r.id, up: r.pt, ready: readyNow, cs: cs}, nil
	}
	ds.mu.Lock()
	if ds.closed {
		ds.mu.Unlock()
		return nil, errSessionEnded
	}
	c := ds.conns[r.id]
	if c == nil || c.up != r.pt || c.dead.Load() {
		if c != nil {
			go c.close()
		}
		c = &upConn{id: r.id, up: r.pt, ready: make(chan struct{})}
		ds.conns[r.id] = c
		go ds.dial(c)
	}
	ds.mu.Unlock()
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.err != nil {
		ds.mu.Lock()
		if ds.conns[r.id] == c {
			delete(ds.conns, r.id) // the next request tries again
		}
		ds.mu.Unlock()
		return nil, c.err
	}
	return c, nil
}

// legacyVersion is the protocol a passthrough session speaks upstream when
// the client's is unknown (or newer): it must be one with sessions.
const legacyVersion = "2025-11-25"

// dial opens c's upstream session with the client's capabilities and
// protocol version, then replays the log level and subscriptions.
func (ds *downstream) dial(c *upConn) {
	defer close(c.ready)
	var caps *sdk.ClientCapabilities
	version := ""
	if ip := ds.ss.InitializeParams(); ip != nil {
		caps, version = ip.Capabilities, ip.ProtocolVersion
	}
	if version == "" || version > legacyVersion {
		version = legacyVersion
	}
	ctx := context.Background() // not the request's: other requests may wait for this dial
	cs, err := c.up.OpenSession(ctx, ds.clientOptions(c, caps), &sdk.ClientSessionOptions{ProtocolVersion: version}, func(cl *sdk.Client) {
		cl.AddReceivingMiddleware(ds.clientReceive(c))
		cl.AddSendingMiddleware(RewriteSends)
	})
	if err != nil {
		c.err = err
		return
	}
	c.cs = cs
	go func() {
		_ = cs.Wait()
		c.dead.Store(true)
	}()

	ds.mu.Lock()
	level := ds.level
	var subs []string
	for uri, id := range ds.subs {
		if id == c.id {
			subs = append(subs, uri)
		}
	}
	ds.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, initWait)
	defer cancel()
	uc := upstreamCaps(cs)
	if level != "" && uc.Logging != nil {
		_ = cs.SetLoggingLevel(rctx, &sdk.SetLoggingLevelParams{Level: level})
	}
	for _, uri := range subs {
		_ = cs.Subscribe(rctx, &sdk.SubscribeParams{URI: uri})
	}
}

func upstreamCaps(cs *sdk.ClientSession) *sdk.ServerCapabilities {
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		return ir.Capabilities
	}
	return &sdk.ServerCapabilities{}
}

// openConns returns the client's upstream sessions of the forwarded
// providers whose upstream has the capability has reports. With one
// provider, its failure is the error; with several, a failing one is skipped.
func (ds *downstream) openConns(ctx context.Context, ups []upstreamRef, has func(*sdk.ServerCapabilities) bool) ([]*upConn, error) {
	var out []*upConn
	var firstErr error
	for _, r := range ups {
		c, err := ds.conn(ctx, r)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if firstErr == nil {
				firstErr = err
			}
			ds.pt.log.Warn("passthrough: upstream unavailable", "provider", r.id, "err", err)
			continue
		}
		if has(upstreamCaps(c.cs)) {
			out = append(out, c)
		}
	}
	if len(out) == 0 && firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}
