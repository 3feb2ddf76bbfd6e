package passthrough

// Upstream prompts: every provider backed by an upstream MCP server has its
// prompts served next to the runtime's own (.agents/prompts): a prefixed
// provider's under canonical names (`<id>_<prompt>`, named as its tools are, see
// docs/modes.md), a provider with bare names' under the upstream's own names
// (prompt names have none of the constraints clients put on tool names). They are registered on the
// attached server, so prompts/list, pagination and prompts/list_changed are
// the SDK's; prompts/get (and completion of their arguments) is forwarded:
// for a passthrough provider in flat mode on the client's own upstream
// session, otherwise on the provider's shared one. The lists come from the
// providers as last seen (live or cached); listing prompts never starts an
// upstream. A runtime prompt wins a name clash.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/naming"
)

// promptOwner is where a published upstream prompt comes from.
type promptOwner struct {
	ref  upstreamRef
	name string // the upstream's own name
}

// SyncPrompts publishes the upstream prompts as they are now on the attached
// server; clients get prompts/list_changed when they changed. The runtime
// calls it when a provider reports a change (after its own prompts).
func (pt *Passthrough) SyncPrompts() {
	type def struct {
		prompt *sdk.Prompt
		owner  promptOwner
		fp     string
	}
	want := map[string]def{}
	for _, r := range pt.upstreams() {
		for _, p := range r.up.UpstreamPrompts() {
			if p == nil || p.Name == "" {
				continue
			}
			name := p.Name // bare names are the upstream's own
			if !r.info.HostLocal {
				var err error
				if name, err = naming.SchemeOf(pt.cat).Canonical(r.id, p.Name, false); err != nil {
					pt.log.Warn("upstream prompt skipped", "provider", r.id, "prompt", p.Name, "err", err)
					continue
				}
			}
			if !pt.published(name) {
				continue // denied by the global rules: hidden, as denied tools are
			}
			if _, dup := want[name]; dup {
				pt.log.Warn("upstream prompt skipped: its name is taken", "provider", r.id, "prompt", p.Name, "name", name)
				continue
			}
			cp := *p
			cp.Name = name
			b, _ := json.Marshal(&cp)
			want[name] = def{prompt: &cp, owner: promptOwner{ref: r, name: p.Name}, fp: r.id + "\x00" + string(b)}
		}
	}

	pt.promptsMu.Lock()
	defer pt.promptsMu.Unlock()
	if pt.server == nil {
		return
	}
	var stale []string
	for name := range pt.prompts {
		local := pt.localPrompt(name)
		if _, ok := want[name]; ok && !local {
			continue
		}
		if !local { // a runtime prompt that took the name is not ours to remove
			stale = append(stale, name)
		}
		delete(pt.prompts, name)
		delete(pt.owners, name)
	}
	if len(stale) > 0 {
		pt.server.RemovePrompts(stale...)
	}
	for name, d := range want {
		if pt.localPrompt(name) {
			pt.log.Debug("upstream prompt hidden by the runtime's prompt of the same name", "provider", d.owner.ref.id, "name", name)
			continue
		}
		pt.owners[name] = d.owner // the live provider (a reload replaces it)
		if pt.prompts[name] == d.fp {
			continue
		}
		pt.prompts[name] = d.fp
		pt.server.AddPrompt(d.prompt, pt.getPrompt(name))
	}
}

func (pt *Passthrough) owner(name string) (promptOwner, bool) {
	pt.promptsMu.Lock()
	defer pt.promptsMu.Unlock()
	o, ok := pt.owners[name]
	return o, ok
}

// promptSession is the upstream session a prompt request goes to: the
// client's own for a forwarded provider, else the provider's shared one.
func (pt *Passthrough) promptSession(ctx context.Context, ss *sdk.ServerSession, o promptOwner) (*sdk.ClientSession, error) {
	if o.ref.pt != nil && ss != nil && pt.forward {
		c, err := pt.downstream(ss).conn(ctx, o.ref)
		if err != nil {
			return nil, err
		}
		return c.cs, nil
	}
	return o.ref.up.Session(ctx)
}

// getPrompt forwards prompts/get of a published upstream prompt.
func (pt *Passthrough) getPrompt(name string) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		o, ok := pt.owner(name)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
		}
		return gated(ctx, pt, req, Op{Method: "prompts/get", Name: name, Provider: o.ref.id, Params: req.Params}, func(ctx context.Context) (*sdk.GetPromptResult, error) {
			cs, err := pt.promptSession(ctx, req.Session, o)
			if err != nil {
				return nil, err
			}
			p := *req.Params
			p.Name = o.name
			return cs.GetPrompt(ctx, &p)
		})
	}
}
