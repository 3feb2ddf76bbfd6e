package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/redact"
)

// DefaultCacheFor is how long a resolved value is reused when the config
// does not say (secrets.cacheFor).
const DefaultCacheFor = 5 * time.Minute

// Resolver resolves references, caches their values and registers each
// value with the redactor. The zero value is not usable; use [NewResolver].
type Resolver struct {
	// CacheFor is how long a value is reused; 0 resolves at every use.
	CacheFor time.Duration
	// Commands are the argvs ${cmd:NAME} runs (secrets.commands).
	Commands map[string][]string
	// Dir is what relative paths (file, age, AGE_IDENTITY_FILE) and
	// commands' working directory are relative to: the config's directory.
	Dir string
	// Env is the environment of pass and commands, and where
	// AGE_IDENTITY_FILE is looked up (nil: this process's).
	Env []string
	// CommandTimeout bounds a pass or ${cmd:…} run (0: DefaultCommandTimeout).
	CommandTimeout time.Duration
	// Redact registers a resolved value under the reference's text
	// without its ${} ("keyring:github/token", shown by the redactor as
	// "[redacted: keyring:github/token]"), in addition to redact.Add, the
	// process-wide redactor.
	Redact func(name, value string)
	// Now is the clock (tests).
	Now func() time.Time

	mu      sync.Mutex
	entries map[Ref]*entry
}

type entry struct {
	mu      sync.Mutex // one resolution at a time per reference
	value   string
	expires time.Time
	ok      bool
}

// NewResolver returns a resolver with the default cache time.
func NewResolver() *Resolver {
	return &Resolver{CacheFor: DefaultCacheFor}
}

// Default is the resolver of callers without one of their own (a provider
// built outside an app); each app has its own, configured from the config
// it serves (secrets: in agent-tools.yaml).
var Default = NewResolver()

// Configure updates the resolver's settings from a (re)loaded config. A
// change of commands or directory drops every cached value.
func (r *Resolver) Configure(cacheFor time.Duration, commands map[string][]string, dir string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := r.Dir != dir || len(commands) != len(r.Commands)
	for k, v := range commands {
		changed = changed || !slices.Equal(v, r.Commands[k])
	}
	r.CacheFor, r.Commands, r.Dir = cacheFor, commands, dir
	if changed {
		r.entries = nil
	}
}

// Error is a reference that did not resolve: the store's words, without
// any value.
type Error struct {
	Ref Ref
	Err error
}

func (e *Error) Error() string { return e.Ref.String() + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func (r *Resolver) entry(ref Ref) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = map[Ref]*entry{}
	}
	e := r.entries[ref]
	if e == nil {
		e = &entry{}
		r.entries[ref] = e
	}
	return e
}

func (r *Resolver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Resolve returns the value of ref, from the cache while it is fresh. An
// empty value is an error: nothing empty is ever sent upstream.
func (r *Resolver) Resolve(ctx context.Context, ref Ref) (string, error) {
	st := Lookup(ref.Store)
	if st == nil {
		_, err := Parse(ref.Store + ":" + ref.Key)
		return "", &Error{Ref: ref, Err: err}
	}
	e := r.entry(ref)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ok && r.now().Before(e.expires) {
		return e.value, nil
	}
	v, err := st.Resolve(ctx, r, ref.Key)
	if err == nil && v == "" {
		err = fmt.Errorf("%s store: the value of %s is empty", ref.Store, ref.Key)
	}
	if err != nil {
		// the store's words, scrubbed of anything already known secret
		return "", &Error{Ref: ref, Err: errors.New(redact.String(err.Error()))}
	}
	r.register(ref, v)
	r.mu.Lock()
	cacheFor := r.CacheFor
	r.mu.Unlock()
	e.value, e.ok, e.expires = v, true, r.now().Add(cacheFor)
	return v, nil
}

func (r *Resolver) register(ref Ref, v string) {
	// The process-wide set, which every output boundary applies, always;
	// a caller's own set too.
	name := ref.Store + ":" + ref.Key // redact.Marker: [redacted: store:key]
	redact.Add(name, v)
	if r.Redact != nil {
		r.Redact(name, v)
	}
	valuesMu.Lock()
	values[v] = valueOf{r: r, ref: ref}
	valuesMu.Unlock()
}

// Invalidate drops ref's cached value: the next use resolves it again
// (after an upstream answered 401).
func (r *Resolver) Invalidate(ref Ref) {
	e := r.entry(ref)
	e.mu.Lock()
	e.ok = false
	e.mu.Unlock()
}

// dir and command read the settings Configure may change while a
// reference resolves (a config reload).
func (r *Resolver) dir() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Dir
}

func (r *Resolver) command(name string) (argv []string, names []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n := range r.Commands {
		names = append(names, n)
	}
	slices.Sort(names)
	return r.Commands[name], names
}

// Expand replaces every store reference in s by its value. The first
// failure is returned, naming its reference.
func (r *Resolver) Expand(ctx context.Context, s string) (string, error) {
	refs := Find(s)
	for _, ref := range refs {
		v, err := r.Resolve(ctx, ref)
		if err != nil {
			return "", err
		}
		s = strings.Replace(s, ref.String(), v, 1)
	}
	return s, nil
}

func (r *Resolver) environ() []string {
	if r.Env != nil {
		return r.Env
	}
	return os.Environ()
}

func (r *Resolver) lookupEnv(name string) (string, bool) {
	if r.Env == nil {
		return os.LookupEnv(name)
	}
	for i := len(r.Env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(r.Env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// values maps every value a resolver handed out to its reference, so that
// a transport can tell which header carries which reference (Transport).
var (
	valuesMu sync.Mutex
	values   = map[string]valueOf{}
)

type valueOf struct {
	r   *Resolver
	ref Ref
}

func sortedClip(keys []string) []string {
	slices.Sort(keys)
	if len(keys) > 10 {
		keys = append(keys[:10:10], "…")
	}
	return keys
}
