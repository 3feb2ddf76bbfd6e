// Package native is the provider behind the public embedding API: tools a Go
// program serves in-process, each one a Go function, whether registered one
// by one (Add) or listed by a backend the program wrote itself (a Source,
// behind the public Provider interface). The program's handlers hold the
// business logic; this package only names, checks, describes and runs them
// safely (a panicking handler is a BACKEND_ERROR, a handler that ignores
// cancellation still lets the call answer on time).
package native

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// Handler runs one call with the arguments already validated against the
// tool's input schema.
type Handler func(ctx context.Context, args json.RawMessage) (*provider.Result, error)

// Tool is one registered tool.
type Tool struct {
	// Name is the action: snake_case, the part after "<namespace>_".
	Name         string
	Description  string
	InputSchema  json.RawMessage // a JSON Schema object ("type": "object")
	OutputSchema json.RawMessage // optional, a JSON Schema object
	ReadOnly     bool
	Timeout      time.Duration // 0: the provider's, else the runtime's
	Handler      Handler
}

// ErrInvalidName marks a namespace or action that is not snake_case.
var ErrInvalidName = errors.New("invalid name")

// ErrDuplicate marks a second tool of the same name.
var ErrDuplicate = errors.New("duplicate tool")

// ErrBadSchema marks a schema that is not a JSON object schema.
var ErrBadSchema = errors.New("bad schema")

var snake = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Normalize turns a plugin id into a namespace (dashes become underscores, so
// that a plugin named like a package, "ai-agents", is a valid tool-name
// prefix) and checks it is snake_case.
func Normalize(namespace string) (string, error) {
	ns := strings.ReplaceAll(namespace, "-", "_")
	if !snake.MatchString(ns) || len(ns) > 64 {
		return "", fmt.Errorf("%w: namespace %q must be snake_case (a-z, 0-9, single underscores; dashes become underscores), at most 64 characters", ErrInvalidName, namespace)
	}
	return ns, nil
}

// Provider is a set of in-process tools under one namespace. It is safe for
// concurrent use; tools may be added while it serves.
type Provider struct {
	info catalog.ProviderInfo
	src  Source // nil: the tools registered with Add

	started atomic.Bool // the source's Start ran

	// fresh tracks the registered tools (Add is the change); a source
	// says for itself (provider.Fresher) or is never fresh.
	fresh provider.Freshness

	mu       sync.RWMutex
	tools    []catalog.Tool // sorted by name; replaced (never mutated) on Add
	handlers map[string]Handler
	// checked are a source's tools as last listed and checked, by name, so
	// that a tool listed again unchanged is not checked (its schemas
	// parsed) again.
	checked  map[string]checkedTool
	onChange func()
	log      *slog.Logger
}

// checkedTool is a source's tool as listed and the catalog entry it gave.
type checkedTool struct {
	listed Tool
	tool   catalog.Tool
}

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Notifier = (*Provider)(nil)
	_ provider.Starter  = (*Provider)(nil)
	_ provider.Closer   = (*Provider)(nil)
	_ provider.Fresher  = (*Provider)(nil)
)

// Source is a backend whose tools live outside this package: it lists them,
// each with its Handler, whenever the runtime reads the catalog. A Source
// may also implement provider.Starter, provider.Closer, provider.Notifier
// and provider.Fresher; the Provider passes those on. A Source that is not
// a Fresher is listed on every read of the catalog.
type Source interface {
	Tools(ctx context.Context) ([]Tool, error)
}

// New returns an empty provider; info.ID must be a valid namespace.
func New(info catalog.ProviderInfo) (*Provider, error) {
	id, err := Normalize(info.ID)
	if err != nil {
		return nil, err
	}
	// Canonical names are {namespace}_{action} exactly: the provider is
	// host-local and each tool carries its full name, so an underscore in
	// the namespace ("ai_agents") is not escaped as a provider prefix's
	// would be.
	info.ID, info.HostLocal = id, true
	if info.Kind == "" {
		info.Kind = "native"
	}
	return &Provider{info: info, handlers: map[string]Handler{}}, nil
}

// NewSource returns a provider whose tools src lists; Add is then refused.
// What src lists is checked as Add checks it, at every listing.
func NewSource(info catalog.ProviderInfo, src Source) (*Provider, error) {
	if src == nil {
		return nil, errors.New("native: nil source")
	}
	p, err := New(info)
	if err != nil {
		return nil, err
	}
	p.src = src
	return p, nil
}

// Info describes the provider.
func (p *Provider) Info() catalog.ProviderInfo { return p.info }

// Add registers a tool. A bad name, a duplicate, a schema that is not an
// object, or a nil handler is an error now, never at the first call.
func (p *Provider) Add(t Tool) error {
	if p.src != nil {
		return fmt.Errorf("provider %s lists its own tools; Add is for registered tools", p.info.ID)
	}
	ct, err := p.check(t)
	if err != nil {
		return err
	}
	name := ct.Name
	p.mu.Lock()
	if _, dup := p.handlers[name]; dup {
		p.mu.Unlock()
		return fmt.Errorf("%w: %s is already registered", ErrDuplicate, name)
	}
	tools := append(slices.Clone(p.tools), ct)
	slices.SortFunc(tools, func(a, b catalog.Tool) int { return strings.Compare(a.Name, b.Name) })
	p.tools = tools
	p.handlers[name] = t.Handler
	p.fresh.Changed()
	notify := p.onChange
	p.mu.Unlock()
	if notify != nil {
		notify() // registered after start: the catalog re-reads and clients hear list_changed
	}
	return nil
}

// check validates t and returns its catalog entry.
func (p *Provider) check(t Tool) (catalog.Tool, error) {
	if !snake.MatchString(t.Name) || len(t.Name) > 64 {
		return catalog.Tool{}, fmt.Errorf("%w: action %q of %q must be snake_case (a-z, 0-9, single underscores), at most 64 characters", ErrInvalidName, t.Name, p.info.ID)
	}
	if t.Handler == nil {
		return catalog.Tool{}, fmt.Errorf("tool %s_%s: nil handler", p.info.ID, t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		return catalog.Tool{}, fmt.Errorf("tool %s_%s: a description is required (it is what the model reads)", p.info.ID, t.Name)
	}
	in, err := objectSchema(t.InputSchema, true)
	if err != nil {
		return catalog.Tool{}, fmt.Errorf("tool %s_%s: input schema: %w", p.info.ID, t.Name, err)
	}
	out, err := objectSchema(t.OutputSchema, false)
	if err != nil {
		return catalog.Tool{}, fmt.Errorf("tool %s_%s: output schema: %w", p.info.ID, t.Name, err)
	}
	return catalog.Tool{
		Provider: p.info.ID, Name: p.info.ID + "_" + t.Name, Description: t.Description, InputSchema: in, OutputSchema: out,
		ReadOnly: t.ReadOnly, Timeout: t.Timeout,
	}, nil
}

// objectSchema checks raw is a JSON object whose "type", if any, is
// "object"; an empty input schema means "no arguments".
func objectSchema(raw json.RawMessage, required bool) (json.RawMessage, error) {
	if len(raw) == 0 {
		if required {
			return json.RawMessage(`{"type":"object","properties":{}}`), nil
		}
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: want a JSON object schema", ErrBadSchema)
	}
	switch t := m["type"].(type) {
	case nil:
		m["type"] = "object"
		raw, _ = jsonscan.Marshal(m)
	case string:
		if t != "object" {
			return nil, fmt.Errorf("%w: type is %q, want \"object\" (tool arguments are a JSON object)", ErrBadSchema, t)
		}
	default:
		return nil, fmt.Errorf("%w: type must be \"object\"", ErrBadSchema)
	}
	return raw, nil
}

// Tools returns the registered tools (the same slice while nothing
// changed), or what the source lists now: one tool the source got wrong
// fails the whole listing, so the error reaches doctor instead of a tool
// silently missing.
func (p *Provider) Tools(ctx context.Context) ([]catalog.Tool, error) {
	if p.src != nil {
		return p.list(ctx)
	}
	p.mu.RLock()
	l := p.fresh.Begin()
	tools := p.tools
	p.mu.RUnlock()
	p.fresh.Done(l)
	return tools, nil
}

// Fresh implements provider.Fresher: registered tools are fresh from the
// listing that returned them until the next Add; a source's are as fresh
// as the source says (provider.Fresher), and never when it cannot say.
func (p *Provider) Fresh() bool {
	if p.src == nil {
		return p.fresh.Fresh(0)
	}
	f, ok := p.src.(provider.Fresher)
	return ok && f.Fresh()
}

func (p *Provider) list(ctx context.Context) ([]catalog.Tool, error) {
	listed, err := p.src.Tools(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	prev, prevTools := p.checked, p.tools
	p.mu.RUnlock()
	tools := make([]catalog.Tool, 0, len(listed))
	handlers := make(map[string]Handler, len(listed))
	checked := make(map[string]checkedTool, len(listed))
	for _, t := range listed {
		ct, ok := reuse(prev, t)
		if !ok {
			if ct, err = p.check(t); err != nil {
				return nil, err
			}
		}
		if _, dup := handlers[ct.Name]; dup {
			return nil, fmt.Errorf("%w: %s is listed twice", ErrDuplicate, ct.Name)
		}
		tools = append(tools, ct)
		handlers[ct.Name] = t.Handler
		checked[t.Name] = checkedTool{listed: t, tool: ct}
	}
	slices.SortFunc(tools, func(a, b catalog.Tool) int { return strings.Compare(a.Name, b.Name) })
	if slices.EqualFunc(tools, prevTools, sameEntry) {
		tools = prevTools // the same slice tells the registry nothing changed without comparing schemas
	}
	p.mu.Lock()
	p.tools, p.handlers, p.checked = tools, handlers, checked
	p.mu.Unlock()
	return tools, nil
}

// reuse returns the catalog entry t gave when it was last listed, if it is
// listed again unchanged (the handler may be a new function: it is not
// part of the entry).
func reuse(prev map[string]checkedTool, t Tool) (catalog.Tool, bool) {
	c, ok := prev[t.Name]
	if !ok {
		return catalog.Tool{}, false
	}
	l := c.listed
	if l.Description != t.Description || l.ReadOnly != t.ReadOnly || l.Timeout != t.Timeout || (l.Handler == nil) != (t.Handler == nil) ||
		!bytes.Equal(l.InputSchema, t.InputSchema) || !bytes.Equal(l.OutputSchema, t.OutputSchema) {
		return catalog.Tool{}, false
	}
	return c.tool, true
}

// sameEntry reports whether two catalog entries are the same one reused
// (their schemas the same bytes in memory).
func sameEntry(a, b catalog.Tool) bool {
	return a.Name == b.Name && a.Description == b.Description && a.ReadOnly == b.ReadOnly && a.Timeout == b.Timeout &&
		sameBytes(a.InputSchema, b.InputSchema) && sameBytes(a.OutputSchema, b.OutputSchema)
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Bind receives the runtime's change callback (provider.Notifier) and
// passes it to a source that reports its own changes.
func (p *Provider) Bind(log *slog.Logger, onChange func()) {
	p.mu.Lock()
	p.onChange, p.log = onChange, log
	p.mu.Unlock()
	if n, ok := p.src.(provider.Notifier); ok {
		n.Bind(log, onChange)
	}
}

// Start starts a source that has a start phase, once: the runtime runs the
// start phase of in-process providers again after each config reload, and
// a program's backend expects one start and one Close.
func (p *Provider) Start(ctx context.Context) error {
	s, ok := p.src.(provider.Starter)
	if !ok || p.started.Swap(true) {
		return nil
	}
	return s.Start(ctx)
}

// Close releases a source that holds resources.
func (p *Provider) Close() error {
	if c, ok := p.src.(provider.Closer); ok {
		return c.Close()
	}
	return nil
}

// Call runs the tool's handler. A panic is recovered into an error (the
// process lives); when ctx ends before a handler that ignores it returns,
// Call returns ctx's error at once and the handler's late answer is dropped.
func (p *Provider) Call(ctx context.Context, t catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	p.mu.RLock()
	h, ok := p.handlers[t.Name]
	p.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("no handler for %q", t.Name)
	}
	type answer struct {
		res *provider.Result
		err error
	}
	done := make(chan answer, 1) // buffered: a late handler never blocks
	go func() {
		defer func() {
			if r := recover(); r != nil {
				pe := &PanicError{Value: r, Stack: debug.Stack()}
				p.logPanic(t, pe)
				done <- answer{err: pe}
			}
		}()
		res, err := h(ctx, args)
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		return a.res, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *Provider) logPanic(t catalog.Tool, pe *PanicError) {
	p.mu.RLock()
	log := p.log
	p.mu.RUnlock()
	if log != nil {
		log.Error("tool handler panicked", "provider", p.info.ID, "tool", t.Name, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	}
}

// PanicError is a handler's recovered panic. Its message does not carry the
// panic value (it could hold anything the service had in hand); the value
// and the stack go to the runtime's log.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return "the handler panicked (the service's log has the details); the process is unaffected"
}
