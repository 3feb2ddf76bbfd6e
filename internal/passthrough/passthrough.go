// Package passthrough is the transparent passthrough (docs/providers/mcp.md): a
// session-multiplexing proxy that forwards, in flat mode, a provider backed
// by an upstream MCP server whose tools keep their bare names (config
// `prefix: ""`) in full: its tools (as flat tools, through the pipeline:
// policy, confirmation, audit, loop guard, deadline), its prompts (mirrored,
// see prompts.go), resources (list, read, templates/list,
// subscribe/unsubscribe and the upstream's notifications/resources/updated
// and list_changed), completion/complete, logging/setLevel and the
// upstream's log messages; and the upstream's requests to the client
// (sampling/createMessage, elicitation/create, roots/list) and progress
// notifications are relayed to the client, both ways (progress tokens
// mapped; cancellation follows the contexts). Prompts of every upstream
// (prefixed ones too, in every mode) are mirrored.
//
// Session affinity: one upstream session per downstream session and
// passthrough provider. It is opened on the downstream session's first
// forwarded request (not at initialize), with the downstream client's own
// capabilities (sampling, elicitation, roots) and protocol version, and
// closed when the downstream session ends. So everything the upstream keeps
// per session — log level, subscriptions, roots, the requests it sends back —
// belongs to exactly one client, and there is nothing to guess. Inside one
// downstream session, an upstream request or log message (which the wire does
// not tie to a call) is relayed under the most recent call still in flight on
// that session (over Streamable HTTP: on that call's SSE stream), else on the
// session's standalone stream; progress is routed exactly, by token. A
// passthrough session that ends is replaced on the next request, replaying
// the log level and subscriptions. The provider's own shared session still
// keeps the catalog (tool list, cache, list_changed) and serves callers that
// are not MCP sessions (CLI, skills). The cost: over stdio, one extra child
// process per connected client; idle HTTP clients should be bounded with
// the HTTP transport's session timeout.
//
// The SDK has no way to send an arbitrary notification to one session; the
// relays use notifyServerSession, a sending middleware that rewrites a
// marked NotifyProgress into the wanted notification ([RewriteSends]).
//
// Files: session.go (per-client upstream sessions), call.go (forwarded tool
// calls), relay.go (what the upstream sends back), list.go, read.go and
// subscribe.go (resources, completion, logging level), prompts.go.
package passthrough

import (
	"context"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
)

// PromptUpstream is a provider backed by an upstream MCP server: its prompts
// are served next to the runtime's own (provider/mcp implements it).
type PromptUpstream interface {
	// Session returns the provider's shared upstream session, starting it if needed.
	Session(ctx context.Context) (*sdk.ClientSession, error)
	// UpstreamPrompts returns the upstream's prompts as last listed; nil when unknown.
	UpstreamPrompts() []*sdk.Prompt
	// UpstreamInit returns the upstream's initialize result (live or cached),
	// starting the upstream under ctx when it is not known; nil when it cannot.
	UpstreamInit(ctx context.Context) *sdk.InitializeResult
}

// Upstream is a PromptUpstream that can be forwarded in full.
type Upstream interface {
	PromptUpstream
	// OpenSession connects a separate session to the same upstream; the
	// caller closes it.
	OpenSession(ctx context.Context, opts *sdk.ClientOptions, sopts *sdk.ClientSessionOptions, setup func(*sdk.Client)) (*sdk.ClientSession, error)
	// CallValues runs a call with a provider.Forward (the binding the
	// pipeline hands over with the call): on its session, with its _meta,
	// the upstream's own result handed to its Raw.
	provider.ValuesCaller
}

// Catalog is what the passthrough reads from the registry.
type Catalog interface {
	Providers() []registry.ProviderStatus
	Provider(id string) (provider.Provider, catalog.ProviderInfo, bool)
	Lookup(canonical string) (catalog.Tool, bool)
}

// Options configure a Passthrough.
type Options struct {
	Catalog Catalog
	// Forward enables forwarding in full of the providers with bare names
	// (the facade's flat mode); without it only prompts are mirrored.
	Forward bool
	// LocalPrompt reports whether the runtime serves a prompt of its own
	// under name (it wins a name clash, and completes to nothing).
	LocalPrompt func(name string) bool
	Logger      *slog.Logger
	// Gate runs resource reads, prompt fetches, completions, subscriptions
	// and log-level changes through the call pipeline (gate.go); nil runs
	// them as they are.
	Gate Gate
	// Sees is the gate's See for one caller (gate.go): every list the
	// passthrough answers (resources, templates, prompts) keeps only what
	// the caller may see (nil: all).
	Sees Sees
	// Published reports whether the global rules let a prompt be
	// registered at all (nil: all are); who sees it is Sees'.
	Published func(name string) bool
	// InView reports whether the server's profile includes a provider (nil:
	// all do): a provider outside it is not reached at all, so none of its
	// resources, templates, prompts, completions or subscriptions is listed
	// or served through this server.
	InView func(providerID string) bool
}

// Passthrough is the forwarding state of one MCP server: one entry per
// downstream session that used a forwarded upstream, and the mirrored
// upstream prompts. Create it with New, install its hooks on the server's
// options with Hooks, its middleware with Receive and RewriteSends, then
// Attach the server.
type Passthrough struct {
	cat         Catalog
	forward     bool
	localPrompt func(string) bool
	log         *slog.Logger
	gate        Gate
	seesFn      Sees
	publish     func(string) bool
	inView      func(string) bool
	seq         atomic.Int64

	mu       sync.Mutex
	sessions map[*sdk.ServerSession]*downstream

	// Mirrored upstream prompts (prompts.go), guarded by promptsMu.
	promptsMu sync.Mutex
	server    *sdk.Server
	prompts   map[string]string      // published name → fingerprint
	owners    map[string]promptOwner // published name → where it comes from
}

// New returns a passthrough over o.Catalog.
func New(o Options) *Passthrough {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LocalPrompt == nil {
		o.LocalPrompt = func(string) bool { return false }
	}
	return &Passthrough{cat: o.Catalog, forward: o.Forward, localPrompt: o.LocalPrompt, log: o.Logger, gate: o.Gate, seesFn: o.Sees, publish: o.Published, inView: o.InView,
		sessions: map[*sdk.ServerSession]*downstream{}, prompts: map[string]string{}, owners: map[string]promptOwner{}}
}

// Hooks installs the server handlers the passthrough answers: they answer
// only when an upstream is forwarded (initialize advertises what it offers).
func (pt *Passthrough) Hooks(o *sdk.ServerOptions) {
	o.SubscribeHandler = pt.subscribe
	o.UnsubscribeHandler = pt.unsubscribe
	o.CompletionHandler = pt.complete
	o.ProgressNotificationHandler = pt.progress
	o.RootsListChangedHandler = pt.rootsChanged
}

// Attach gives the passthrough the server it mirrors prompts on.
func (pt *Passthrough) Attach(s *sdk.Server) {
	pt.promptsMu.Lock()
	pt.server = s
	pt.promptsMu.Unlock()
}

// upstreamRef is one provider backed by an upstream MCP server.
type upstreamRef struct {
	id   string
	info catalog.ProviderInfo
	up   PromptUpstream
	pt   Upstream // non-nil: forwarded in full (flat mode, bare names)
}

// upstreams are the enabled providers backed by an upstream MCP server, in
// the registry's order.
func (pt *Passthrough) upstreams() []upstreamRef {
	var out []upstreamRef
	for _, st := range pt.cat.Providers() {
		if !st.Enabled || (pt.inView != nil && !pt.inView(st.Info.ID)) {
			continue
		}
		p, info, ok := pt.cat.Provider(st.Info.ID)
		if !ok {
			continue
		}
		up, ok := provider.As[PromptUpstream](p) // through wrappers (skills.Wrap)
		if !ok {
			continue
		}
		r := upstreamRef{id: info.ID, info: info, up: up}
		if pt.forward && info.HostLocal {
			r.pt, _ = provider.As[Upstream](p)
		}
		out = append(out, r)
	}
	return out
}

// forwardedRef returns provider id when it is forwarded in full (cheap: it
// runs for every flat call).
func (pt *Passthrough) forwardedRef(id string) (upstreamRef, bool) {
	if !pt.forward {
		return upstreamRef{}, false
	}
	p, info, ok := pt.cat.Provider(id)
	if !ok || !info.HostLocal || (pt.inView != nil && !pt.inView(id)) {
		return upstreamRef{}, false
	}
	up, ok := provider.As[Upstream](p)
	if !ok {
		return upstreamRef{}, false
	}
	return upstreamRef{id: info.ID, info: info, up: up, pt: up}, true
}

// forwarded are the upstreams forwarded in full.
func (pt *Passthrough) forwarded() []upstreamRef {
	var out []upstreamRef
	for _, r := range pt.upstreams() {
		if r.pt != nil {
			out = append(out, r)
		}
	}
	return out
}

// Methods are the client requests the passthrough answers, forwards or
// gates besides tools/*: each is a row of the gate's request-type matrix
// (requests_matrix_test.go), so a case added to Receive or Hooks adds its
// method here and the matrix then requires its row.
var Methods = []string{
	"resources/list", "resources/templates/list", "resources/read",
	"resources/subscribe", "resources/unsubscribe",
	"prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
}

// initWait bounds how long initialize waits to learn an upstream's
// capabilities when neither a live session nor the cache knows them.
const initWait = 5 * time.Second

// Receive is the server middleware that forwards what the SDK has no
// handler option for: initialize's capabilities, resources, logging level.
func (pt *Passthrough) Receive(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "initialize", "server/discover":
			res, err := next(ctx, method, req)
			if err == nil {
				switch r := res.(type) {
				case *sdk.InitializeResult:
					pt.advertise(ctx, &r.Capabilities, &r.Instructions, true)
					r.ServerInfo = pt.serverInfo(ctx, r.ServerInfo)
				case *sdk.DiscoverResult:
					pt.advertise(ctx, &r.Capabilities, &r.Instructions, false)
				}
			}
			return res, err
		case "prompts/list":
			res, err := next(ctx, method, req)
			if lp, ok := res.(*sdk.ListPromptsResult); ok && err == nil {
				return pt.visiblePrompts(req, lp), nil
			}
			return res, err
		case "prompts/get":
			// An upstream's prompt is gated by its handler (getPrompt),
			// under its provider; any other name (the runtime's own
			// prompts, a name no one publishes) is gated here, so that
			// every prompt a caller may not see answers as one that does
			// not exist, through the pipeline (audited).
			if p, ok := req.GetParams().(*sdk.GetPromptParams); ok && p != nil {
				if _, upstream := pt.owner(p.Name); !upstream {
					return gated(ctx, pt, req, Op{Method: method, Name: p.Name, Params: p}, func(ctx context.Context) (sdk.Result, error) {
						return next(ctx, method, req)
					})
				}
			}
			return next(ctx, method, req)
		case "resources/list", "resources/templates/list", "resources/read", "logging/setLevel":
		default:
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*sdk.ServerSession)
		ups := pt.forwarded()
		if ss == nil || len(ups) == 0 {
			return next(ctx, method, req)
		}
		ds := pt.downstream(ss)
		switch p := req.GetParams().(type) {
		case *sdk.ListResourcesParams:
			res, err := ds.listResources(ctx, ups, p)
			if err == nil {
				res = pt.visibleResources(req, ds, ups, res)
			}
			return result(res, err)
		case *sdk.ListResourceTemplatesParams:
			res, err := ds.listTemplates(ctx, ups, p)
			if err == nil {
				res = pt.visibleTemplates(req, ds, ups, res)
			}
			return result(res, err)
		case *sdk.ReadResourceParams:
			return result(gated(ctx, pt, req, Op{Method: method, Name: p.URI, Provider: ds.ownerIn(ups, p.URI), Params: p},
				func(ctx context.Context) (*sdk.ReadResourceResult, error) { return ds.read(ctx, ups, p) }))
		case *sdk.SetLoggingLevelParams:
			if _, err := gated(ctx, pt, req, Op{Method: method, Name: method, Params: p, Session: true}, func(ctx context.Context) (*struct{}, error) {
				ds.setLevel(ctx, p)
				return nil, nil
			}); err != nil {
				return nil, err
			}
		}
		return next(ctx, method, req)
	}
}

// result avoids a typed nil Result next to an error.
func result[R sdk.Result](r R, err error) (sdk.Result, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// serverInfo is the runtime's server info with the description and website
// of what it forwards (flat mode publishes what the upstream said): the one
// forwarded upstream's, or the descriptions of several. A copy: the SDK
// hands out its own Implementation to every session.
func (pt *Passthrough) serverInfo(ctx context.Context, own *sdk.Implementation) *sdk.Implementation {
	if own == nil || own.Description != "" || own.WebsiteURL != "" {
		return own
	}
	var descs, sites []string
	for _, r := range pt.forwarded() {
		wctx, cancel := context.WithTimeout(ctx, initWait)
		init := r.pt.UpstreamInit(wctx) // known by now: advertise asked first
		cancel()
		if init == nil || init.ServerInfo == nil {
			continue
		}
		if d := strings.TrimSpace(init.ServerInfo.Description); d != "" {
			descs = append(descs, d)
		}
		if u := strings.TrimSpace(init.ServerInfo.WebsiteURL); u != "" {
			sites = append(sites, u)
		}
	}
	if len(descs) == 0 && len(sites) == 0 {
		return own
	}
	c := *own
	c.Description = strings.Join(descs, "\n\n")
	if len(sites) == 1 { // a website is one upstream's: never a guess among several
		c.WebsiteURL = sites[0]
	}
	return &c
}

// advertise adds to initialize's (or server/discover's) answer what the
// forwarded upstreams offer (resources, logging, completions; prompts are
// mirrored) and their instructions. Without sessions there are no
// subscriptions nor log levels to forward.
func (pt *Passthrough) advertise(ctx context.Context, capsp **sdk.ServerCapabilities, instructions *string, sessions bool) {
	if *capsp == nil {
		*capsp = &sdk.ServerCapabilities{}
	}
	caps := *capsp
	completions := false
	for _, r := range pt.forwarded() {
		wctx, cancel := context.WithTimeout(ctx, initWait)
		init := r.pt.UpstreamInit(wctx)
		cancel()
		if init == nil || init.Capabilities == nil {
			continue
		}
		uc := init.Capabilities
		if uc.Resources != nil {
			if caps.Resources == nil {
				caps.Resources = &sdk.ResourceCapabilities{}
			}
			caps.Resources.ListChanged = caps.Resources.ListChanged || uc.Resources.ListChanged
			caps.Resources.Subscribe = caps.Resources.Subscribe || uc.Resources.Subscribe && sessions
		}
		if uc.Logging != nil && sessions {
			caps.Logging = &sdk.LoggingCapabilities{}
		}
		if uc.Prompts != nil && caps.Prompts == nil {
			caps.Prompts = &sdk.PromptCapabilities{ListChanged: true}
		}
		if uc.Completions != nil {
			completions = true
		}
		if s := strings.TrimSpace(init.Instructions); s != "" {
			*instructions = strings.TrimSpace(*instructions + "\n\n" + s)
		}
	}
	if !completions {
		caps.Completions = nil // the handler is always installed; the capability only when an upstream has it
	}
}
