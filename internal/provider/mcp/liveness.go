package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
	"github.com/agent-tools/agent-tools/internal/redact"
)

// Liveness: a call that times out may mean the tool is slow, or that the
// upstream stopped answering altogether (its read loop is stuck, it stopped
// reading its stdin, its HTTP session is gone). After every timed-out call
// the session is pinged; an upstream that does not answer the ping within
// PingTimeout is recycled: a stdio child is killed (its process group) and
// restarted with the usual backoff, an HTTP session is dropped and
// re-established. Calls in flight on the recycled session fail at once with
// PROVIDER_UNAVAILABLE.

// DefaultPingTimeout bounds the liveness ping after a timed-out call.
const DefaultPingTimeout = 5 * time.Second

// stuckGrace is how long Call waits for the SDK to return after the call's
// context ended: it returns at once unless its write to the upstream is
// blocked (an upstream that stopped reading), and then Call must not hang.
const stuckGrace = 250 * time.Millisecond

// errStuck marks a call abandoned because the SDK could not even give up.
var errStuck = errors.New("the upstream is not reading its input")

// callTool runs CallTool but returns no later than stuckGrace after ctx ends:
// over stdio the SDK's write of the request can block on a full pipe (an
// upstream that stopped reading its stdin) whatever ctx says.
func callTool(ctx context.Context, s *session, params *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	type out struct {
		res *sdk.CallToolResult
		err error
	}
	if s.proc == nil {
		// Over HTTP the SDK's write is a POST under ctx and its wait ends
		// with ctx: the call cannot outlive ctx, so it runs on the caller's
		// goroutine (a goroutine and two handoffs less: ~40 µs of latency
		// per call on a busy 2-core machine, bench/overhead).
		return s.cs.CallTool(ctx, params)
	}
	ch := make(chan out, 1)
	go func() {
		jsonrpcwire.GrowStack() // the SDK's call goes deep: one copy now, not several (jsonrpcwire.GrowStack)
		res, err := s.cs.CallTool(ctx, params)
		ch <- out{res, err}
	}()
	select {
	case o := <-ch:
		return o.res, o.err
	case <-ctx.Done():
	}
	t := time.NewTimer(stuckGrace)
	defer t.Stop()
	select {
	case o := <-ch:
		return o.res, o.err
	case <-t.C:
		return nil, fmt.Errorf("%w: %w", errStuck, context.Cause(ctx))
	}
}

// probe pings s after a timed-out call and recycles it when it does not
// answer. One probe runs per session at a time.
func (p *Provider) probe(s *session) {
	if !s.probing.CompareAndSwap(false, true) {
		return
	}
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		defer s.probing.Store(false)
		err := ping(s, p.opts.PingTimeout)
		if err == nil || s.ctx.Err() != nil {
			return
		}
		cause := fmt.Errorf("the upstream stopped answering: no reply to a ping within %s after a timed-out call (%v)", p.opts.PingTimeout, err)
		p.problem("%v; recycling it", cause)
		p.died(s, cause)
	}()
}

// ping sends one ping, bounded by d even if the SDK's write blocks.
func ping(s *session, d time.Duration) error {
	ctx, cancel := context.WithTimeout(s.ctx, d)
	defer cancel()
	ch := make(chan error, 1)
	go func() { ch <- s.cs.Ping(ctx, nil) }()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// scrubErr removes the upstream's URL secrets from an error before it is
// stored, logged or returned: Go's HTTP client wraps transport failures as
// `Post "<full URL>": …`, so the userinfo, query and ${VAR} path segments
// of the configured URL would otherwise reach the model and doctor.
func (p *Provider) scrubErr(err error) error {
	if err == nil || p.opts.URL == "" {
		return redact.Default.Error(err)
	}
	if _, ok := err.(*scrubbedErr); ok {
		return err
	}
	return &scrubbedErr{err: err, raw: p.opts.URL, safe: redactURL(p.opts.URL)}
}

type scrubbedErr struct {
	err       error
	raw, safe string
}

func (e *scrubbedErr) Error() string {
	msg := e.err.Error()
	for _, form := range urlForms(e.raw) {
		msg = strings.ReplaceAll(msg, form, e.safe)
		// A wrapped error may already have been scrubbed by the redactor
		// (its ${VAR} path segments replaced) but still hold the query.
		msg = strings.ReplaceAll(msg, redact.String(form), e.safe)
	}
	return redact.String(msg)
}

func (e *scrubbedErr) Unwrap() error { return e.err }

// urlForms are the spellings of raw an error may quote (the parsed URL
// prints re-encoded).
func urlForms(raw string) []string {
	forms := []string{raw}
	if u, err := url.Parse(raw); err == nil {
		if s := u.String(); s != raw {
			forms = append(forms, s)
		}
		if _, ok := u.User.Password(); ok {
			// net/http quotes the URL with the password masked as "***"
			// (URL.Redacted masks it as "xxxxx"): the query is still there.
			forms = append(forms, u.Redacted(),
				strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1))
		}
	}
	return forms
}
