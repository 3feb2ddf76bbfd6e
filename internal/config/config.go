// Package config loads and validates agent-tools.yaml.
//
// Every problem is reported with file, line, column and key path, all of
// them at once, as an *Errors. Scalar values may reference the host
// environment as ${VAR} or ${VAR:-default} ($$ is a literal $); interpolated
// values never appear in error messages, only the variable names.
package config

import (
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/secrets"

	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FileName is the config file looked up in a project directory.
const FileName = "agent-tools.yaml"

// Reserved provider ids: "local" and "builtin" are host-local providers and
// "agent" would clash with the agent_tools_* facade names.
var ReservedIDs = []string{"local", "builtin", "agent"}

// Enumerations accepted by the config.
var (
	Modes          = []string{"progressive", "search", "flat", "text", "code"}
	ConfirmModes   = []string{"agent", "token", "human"}
	DefaultTimeout = Duration{60 * time.Second} // local scripts
)

// MaxIDLen is the longest provider id.
const MaxIDLen = 32

// Defaults applied when a key is absent.
const (
	DefaultMode       = "progressive"
	DefaultLocalDir   = ".agents/tools"
	DefaultPromptsDir = ".agents/prompts"
	// DefaultSessionTimeout reaps idle HTTP sessions (set 0 to keep them forever).
	DefaultSessionTimeout = time.Hour
	DefaultConfirm        = "agent"
	DefaultAddr           = "127.0.0.1:8321"
	DefaultMaxResultChars = 30000
	DefaultRepeatAfter    = 3
	DefaultRefuseAfter    = 6
	DefaultCoolDown       = 60 * time.Second
	// AuditOff as audit.path disables the audit log; "" means stderr.
	AuditOff = "off"
)

// Config is a loaded agent-tools.yaml. After Load/Parse/Default every
// relative path (local.dir, providers[].cwd, providers[].spec, audit.path)
// has been resolved against Dir.
type Config struct {
	// Path is the absolute path of the file ("" for zero-config).
	Path string `json:"-" yaml:"-"`
	// Dir is the absolute directory relative paths resolve against (the
	// file's directory, or the project directory for zero-config).
	Dir string `json:"-" yaml:"-"`

	Mode      string     `json:"mode" yaml:"mode"`
	Naming    string     `json:"naming" yaml:"naming"` // readable | lossless (naming.go)
	Flat      Flat       `json:"flat" yaml:"flat"`
	Local     Local      `json:"local" yaml:"local"`
	Providers []Provider `json:"providers" yaml:"providers"`
	Prompts   Prompts    `json:"prompts" yaml:"prompts"`
	Policy    Policy     `json:"policy" yaml:"policy"`
	Server    Server     `json:"server" yaml:"server"`
	Audit     Audit      `json:"audit" yaml:"audit"`
	Limits    Limits     `json:"limits" yaml:"limits"`
	Index     Index      `json:"index,omitzero" yaml:"index,omitempty"`
	// Progressive tunes progressive mode: above GroupAbove providers (0:
	// the default, 4; negative: never) they are grouped behind one
	// discover and one call (docs/modes.md).
	Progressive Progressive `json:"progressive,omitzero" yaml:"progressive,omitempty"`
	Code        Code        `json:"code,omitzero" yaml:"code,omitempty"`
	// Profiles are named views served at /mcp/p/<slug> (profiles.go).
	Profiles map[string]Profile `json:"profiles,omitempty" yaml:"profiles,omitempty"`
	Security Security           `json:"security,omitzero" yaml:"security,omitempty"`
	// SecretStores is the secrets: section (secretrefs.go): cache time of
	// resolved references and the commands ${cmd:NAME} runs.
	SecretStores SecretsConfig `json:"secrets,omitzero" yaml:"secrets,omitempty"`
	// Registry lists the MCP server registries `agent-tools registry` uses.
	Registry Registry `json:"registry,omitzero" yaml:"registry,omitempty"`
	// Quotas are per-identity, per-tool limits on calls (quotas.go).
	Quotas []Quota `json:"quotas,omitempty" yaml:"quotas,omitempty"`
	// Cache lists the read-only tools whose results are kept (cache.go).
	Cache []CacheRule `json:"cache,omitempty" yaml:"cache,omitempty"`

	meta *meta // positions of the source; nil for configs built in code
}

// Local configures the repository-scripts provider (id "local").
type Local struct {
	Dir            string   `json:"dir" yaml:"dir"`
	RequireConfirm bool     `json:"requireConfirm" yaml:"requireConfirm"`
	Enabled        bool     `json:"enabled" yaml:"enabled"`
	Timeout        Duration `json:"timeout" yaml:"timeout"`
	Description    string   `json:"description,omitempty" yaml:"description,omitempty"`
	// Rename maps a script's own name to the name to use instead, as a
	// provider's rename: does (naming.go).
	Rename map[string]string `json:"rename,omitempty" yaml:"rename,omitempty"`
}

// Provider is one entry of providers:. The keys every kind shares are
// fields; the keys of its kind are decoded into Spec (see Kind in kinds.go),
// and JSON output puts both side by side as the YAML has them.
type Provider struct {
	ID           string `json:"id" yaml:"id"`
	Kind         string `json:"kind" yaml:"kind"`
	Description  string `json:"description,omitempty" yaml:"description,omitempty"`
	DiscoverHint string `json:"discoverHint,omitempty" yaml:"discoverHint,omitempty"`
	Enabled      bool   `json:"enabled" yaml:"enabled"`
	// ReadOnly names tools (or, for kinds that say so, globs) that never
	// need confirmation.
	ReadOnly       []string `json:"readonly,omitempty" yaml:"readonly,omitempty"`
	RequireConfirm bool     `json:"requireConfirm" yaml:"requireConfirm"`
	// Timeout is the per-call deadline; 0 means the runtime default.
	Timeout Duration `json:"timeout" yaml:"timeout"`
	// Skills is a directory of JavaScript skill files (run in the sandbox).
	Skills string `json:"skills,omitempty" yaml:"skills,omitempty"`
	// Rename maps a tool's own name to the name to use instead (naming.go).
	Rename map[string]string `json:"rename,omitempty" yaml:"rename,omitempty"`
	// Overrides are the operator's view of tools (overrides.go).
	Overrides map[string]Override `json:"overrides,omitempty" yaml:"overrides,omitempty"`
	// Pin "quarantine" holds each of the provider's tools from its first
	// listing until a person approves it, whatever security.pin says.
	Pin string `json:"pin,omitempty" yaml:"pin,omitempty"`
	// Spec holds the kind's own keys, the spec type of its kind's package
	// (*mcp.Spec, *cli.Spec, ...; nil when the kind is missing or unknown,
	// which Validate reports).
	Spec Spec `json:"-" yaml:"-"`

	// Unresolved lists ${VAR} references that were not set. It can only be
	// non-empty for a disabled provider (for an enabled one they are errors);
	// enabling such a provider at run time should be refused.
	Unresolved []string `json:"unresolved,omitempty" yaml:"-"`
	// Pos is where the entry starts in the file (zero for code-built configs).
	Pos Pos `json:"-" yaml:"-"`
	// Registry is set for an entry `agent-tools registry add` wrote (its
	// marker comment; registrymark.go): with pin: quarantine nothing of it
	// runs until a person approves it.
	Registry *RegistryEntry `json:"-" yaml:"-"`
}

// Prompts configures the Markdown prompts served as MCP prompts.
type Prompts struct {
	Dir string `json:"dir" yaml:"dir"`
}

// Policy holds allow/deny rules over canonical names (path.Match globs).
type Policy struct {
	Confirm string   `json:"confirm" yaml:"confirm"`
	Deny    []string `json:"deny,omitempty" yaml:"deny,omitempty"`
	// Allow, when non-empty, makes only matching canonical names callable.
	Allow []string `json:"allow,omitempty" yaml:"allow,omitempty"`
	// ApprovalTimeout bounds how long a mutating call under confirm: human
	// waits for a person in the console (0: the console's default, 2m).
	ApprovalTimeout Duration `json:"approvalTimeout,omitzero" yaml:"approvalTimeout,omitempty"`
	// Rules are per-identity allow/deny/confirm (profiles.go).
	Rules []Rule `json:"rules,omitempty" yaml:"rules,omitempty"`
	// Operators are identity globs (path.Match, as rules' identities) that
	// may administer the server: the console's admin routes, approvals,
	// pins. Unset: the console's login link and every identity that no
	// per-identity rule restricts.
	Operators []string `json:"operators,omitempty" yaml:"operators,omitempty"`
}

// Server configures the transports and, for replicas behind a load
// balancer, what they share (see cluster.go).
type Server struct {
	HTTP HTTP `json:"http" yaml:"http"`
	// Redis holds the state replicas share (loop guard, rate limits, used
	// confirmation tokens, the session registry); empty = this process only.
	Redis Redis `json:"redis,omitzero" yaml:"redis,omitempty"`
	// ClusterKey signs confirmation tokens and session ids so that any
	// replica can verify them (at least 32 bytes; usually
	// "${AGENT_TOOLS_CLUSTER_KEY}"). Empty: that variable, else a key made
	// per process. A secret: see Redacted.
	ClusterKey string `json:"clusterKey,omitempty" yaml:"clusterKey,omitempty"`
	// GC tunes the garbage collector of serve (see gc.go).
	GC GC `json:"gc,omitzero" yaml:"gc,omitempty"`
}

// HTTP configures the Streamable HTTP transport. Zero values mean the
// transport's defaults (see internal/transport).
type HTTP struct {
	Addr   string   `json:"addr" yaml:"addr"`
	Tokens []string `json:"tokens,omitempty" yaml:"tokens,omitempty"` // secrets: see Redacted
	// TokenNames[i] names Tokens[i] ("" when the file gave it none): a
	// named token's identity is "token:<name>", an unnamed one's
	// "token:<8 hex digits of its SHA-256>". Written in the file as a token
	// entry {name: ci, token: ${CI_TOKEN}}; nil when no token is named.
	TokenNames []string `json:"tokenNames,omitempty" yaml:"-"`
	// TokenUses[i] is Tokens[i]'s use ("" = mcp, or "console": a person's
	// console login only); nil when no entry sets one.
	TokenUses []string `json:"tokenUses,omitempty" yaml:"-"`
	// OIDC validates JWT bearer tokens from an OpenID Connect issuer.
	OIDC OIDC `json:"oidc,omitzero" yaml:"oidc,omitempty"`
	// Resource is this server's public /mcp URL, the protected-resource id
	// advertised at /.well-known/oauth-protected-resource ("" = derived from
	// each request's Host).
	Resource string `json:"resource,omitempty" yaml:"resource,omitempty"`
	// AllowedOrigins are browser origins (scheme://host[:port], or "*")
	// accepted besides loopback ones.
	AllowedOrigins []string `json:"allowedOrigins,omitempty" yaml:"allowedOrigins,omitempty"`
	// AllowedHosts are Host header values (host or host:port, or "*")
	// accepted besides loopback names.
	AllowedHosts []string `json:"allowedHosts,omitempty" yaml:"allowedHosts,omitempty"`
	// BodyLimit is the largest request body in bytes (0 = 4 MiB).
	BodyLimit int `json:"bodyLimit,omitempty" yaml:"bodyLimit,omitempty"`
	// BodyTimeout is how long a request body may take to arrive, whole
	// (0 = 30s): a client that trickles its body is cut (408).
	BodyTimeout Duration `json:"bodyTimeout,omitzero" yaml:"bodyTimeout,omitempty"`
	// RateLimit bounds requests per token (or per client address without auth).
	RateLimit RateLimit `json:"rateLimit,omitzero" yaml:"rateLimit,omitempty"`
	// SessionTimeout closes sessions idle this long (default 1h; 0 = never).
	SessionTimeout Duration `json:"sessionTimeout,omitzero" yaml:"sessionTimeout,omitempty"`
	// ShutdownGrace is how long in-flight calls may finish on shutdown (0 = 10s).
	ShutdownGrace Duration `json:"shutdownGrace,omitzero" yaml:"shutdownGrace,omitempty"`
	// Stateless serves every request without a session (for load balancers).
	Stateless bool `json:"stateless,omitempty" yaml:"stateless,omitempty"`
	// JSONResponse answers POSTs with application/json instead of an SSE
	// stream (notifications then travel on the session's GET stream).
	JSONResponse bool `json:"jsonResponse,omitempty" yaml:"jsonResponse,omitempty"`
}

// OIDC configures JWT bearer validation against an OpenID Connect issuer
// (discovery, JWKS with key rotation, audience, expiry).
type OIDC struct {
	Issuer   string `json:"issuer,omitempty" yaml:"issuer,omitempty"`
	Audience string `json:"audience,omitempty" yaml:"audience,omitempty"`
	// ClockSkew tolerates clocks that disagree about expiry (0 = 30s).
	ClockSkew Duration `json:"clockSkew,omitzero" yaml:"clockSkew,omitempty"`
}

// RateLimit is a token bucket per caller: PerSecond requests on average,
// bursts up to Burst (0 = twice PerSecond). PerSecond 0 means the default
// (50); a negative value is rejected, use Off to disable.
type RateLimit struct {
	PerSecond int  `json:"perSecond,omitempty" yaml:"perSecond,omitempty"`
	Burst     int  `json:"burst,omitempty" yaml:"burst,omitempty"`
	Off       bool `json:"off,omitempty" yaml:"off,omitempty"`
}

// AuthConfigured reports whether inbound HTTP auth is set up.
func (h HTTP) AuthConfigured() bool { return len(h.Tokens) > 0 || h.OIDC.Issuer != "" }

// Audit configures the audit log.
type Audit struct {
	// Path is "" for stderr, AuditOff to disable, else an absolute file path.
	Path string `json:"path" yaml:"path"`
}

// Limits bounds results and repeated failures. A zero value disables the
// corresponding limit.
type Limits struct {
	MaxResultChars int       `json:"maxResultChars" yaml:"maxResultChars"`
	LoopGuard      LoopGuard `json:"loopGuard" yaml:"loopGuard"`
	// CacheBytes bounds the in-memory result cache (0: DefaultCacheBytes; cache.go).
	CacheBytes int64 `json:"cacheBytes,omitempty" yaml:"cacheBytes,omitempty"`
}

// Code bounds the tool calls execute_javascript scripts make through
// `tools` (mode code, and execute_javascript in every mode). Zero values
// take the runtime's defaults.
type Code struct {
	// AllowMutations lets scripts call tools that change state (each call
	// still asks for confirmation as a direct one would). Default false:
	// such a call throws DENIED inside the script.
	AllowMutations bool `json:"allowMutations,omitempty" yaml:"allowMutations,omitempty"`
	// MaxCalls bounds tools.call per script (default 50).
	MaxCalls int `json:"maxCalls,omitempty" yaml:"maxCalls,omitempty"`
	// Concurrency bounds the calls in flight at once (default 4).
	Concurrency int `json:"concurrency,omitempty" yaml:"concurrency,omitempty"`
	// Timeout is a script's wall time when the call sets no timeout_ms,
	// and the most timeout_ms may ask for (default 30s; tool calls count).
	Timeout Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
	// Memory bounds each script's process in bytes, written as a number or
	// with a unit ("256MiB"); 0 = DefaultCodeMemory. At least MinCodeMemory.
	Memory int64 `json:"memory,omitempty" yaml:"memory,omitempty"`
	// CPU bounds each script's processor time (default 10s; whole seconds
	// count, so at least 1s).
	CPU Duration `json:"cpu,omitzero" yaml:"cpu,omitempty"`
	// MaxConcurrent bounds the scripts running at once in this process, in
	// sum (0 = twice GOMAXPROCS, from 4 to 16: jsrun.DefaultTotal).
	MaxConcurrent int `json:"maxConcurrent,omitempty" yaml:"maxConcurrent,omitempty"`
	// MaxPerIdentity bounds one caller identity's scripts at once (0 = 4);
	// more than MaxConcurrent is allowed (MaxConcurrent then binds). A
	// script over either cap waits up to 2s, then is refused with
	// retry_after_ms.
	MaxPerIdentity int `json:"maxPerIdentity,omitempty" yaml:"maxPerIdentity,omitempty"`
}

// Code-mode process limits (docs/modes.md, "Code mode").
const (
	DefaultCodeMemory = 256 << 20
	MinCodeMemory     = 32 << 20
)

// LoopGuard is the repeated-failure guard (internal/policy): from the
// RepeatAfter-th identical failure the error says so, after RefuseAfter the
// call is refused until CoolDown has passed since the last failure.
type LoopGuard struct {
	RepeatAfter int      `json:"repeatAfter" yaml:"repeatAfter"`
	RefuseAfter int      `json:"refuseAfter" yaml:"refuseAfter"`
	CoolDown    Duration `json:"coolDown" yaml:"coolDown"`
}

// Pos is a 1-based position in the file.
type Pos struct{ Line, Col int }

// Default returns the zero-config configuration for a project directory:
// mode progressive, the local provider over .agents/tools with confirmation
// required and a 60s timeout, no other providers.
func Default(projectDir string) *Config {
	dir, err := filepath.Abs(projectDir)
	if err != nil {
		dir = filepath.Clean(projectDir)
	}
	c := defaults()
	c.Dir = dir
	c.resolvePaths()
	return c
}

// Sets reports whether the file wrote the key at path ("local",
// "prompts.dir"), as opposed to a default filling it in. Configs built in
// code set nothing.
func (c *Config) Sets(path string) bool {
	if c == nil || c.meta == nil {
		return false
	}
	_, ok := c.meta.key[path]
	return ok
}

// KeyPos is where the file wrote the key at path ("providers[2].overrides.log").
func (c *Config) KeyPos(path string) (Pos, bool) {
	if c == nil || c.meta == nil {
		return Pos{}, false
	}
	p, ok := c.meta.key[path]
	return p, ok
}

func defaults() *Config {
	return &Config{
		Mode:   DefaultMode,
		Naming: DefaultNaming,
		Flat:   Flat{MaxNameLength: DefaultFlatMaxNameLength},
		Local: Local{
			Dir:            DefaultLocalDir,
			RequireConfirm: true,
			Enabled:        true,
			Timeout:        DefaultTimeout,
		},
		Prompts:      Prompts{Dir: DefaultPromptsDir},
		Policy:       Policy{Confirm: DefaultConfirm},
		SecretStores: SecretsConfig{CacheFor: Duration{secrets.DefaultCacheFor}},
		Server:       Server{HTTP: HTTP{Addr: DefaultAddr, SessionTimeout: Duration{DefaultSessionTimeout}}},
		Limits: Limits{
			MaxResultChars: DefaultMaxResultChars,
			LoopGuard: LoopGuard{
				RepeatAfter: DefaultRepeatAfter,
				RefuseAfter: DefaultRefuseAfter,
				CoolDown:    Duration{DefaultCoolDown},
			},
		},
	}
}

// Find returns dir/agent-tools.yaml when that file exists.
func Find(dir string) (path string, ok bool) {
	p := filepath.Join(dir, FileName)
	st, err := os.Stat(p)
	if err != nil || st.IsDir() {
		return "", false
	}
	return p, true
}

// Load reads and parses a config file. File errors are returned as is
// (errors.Is(err, fs.ErrNotExist) works); content errors as *Errors, whose
// positions name path as given. A nil env means os.LookupEnv.
func Load(path string, env func(string) (string, bool)) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data, env)
}

// Parse parses and validates config data. name is used in error positions
// and, made absolute, as Config.Path (its directory is Config.Dir). Empty
// data (or only comments) gives the zero-config defaults. A nil env means
// os.LookupEnv.
func Parse(name string, data []byte, env func(string) (string, bool)) (*Config, error) {
	if env == nil {
		env = os.LookupEnv
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		abs = filepath.Clean(name)
	}
	c, errs := decode(name, data, env)
	if c != nil {
		c.Path = abs
		c.Dir = filepath.Dir(abs)
		errs = append(errs, c.validate()...)
	}
	if len(errs) > 0 {
		return nil, newErrors(errs)
	}
	c.resolvePaths()
	return c, nil
}

// Progressive is the `progressive:` section.
type Progressive struct {
	GroupAbove int `json:"groupAbove,omitempty" yaml:"groupAbove,omitempty"`
}

// Validate checks the semantic rules (kinds, ids, required fields, globs,
// limits...). Load and Parse call it; call it again after changing a
// Config in code. It returns nil or an *Errors.
func (c *Config) Validate() error {
	if errs := c.validate(); len(errs) > 0 {
		return newErrors(errs)
	}
	return nil
}

// Resolve makes a config-relative path absolute against Dir. "" stays "",
// and URLs (containing "://") are returned as is.
func (c *Config) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || strings.Contains(p, "://") || c.Dir == "" {
		return p
	}
	return filepath.Join(c.Dir, p)
}

func (c *Config) resolvePaths() {
	c.Local.Dir = c.Resolve(c.Local.Dir)
	c.Prompts.Dir = c.Resolve(c.Prompts.Dir)
	c.Index.Semantic.Model = c.Resolve(c.Index.Semantic.Model)
	if c.Audit.Path != AuditOff {
		c.Audit.Path = c.Resolve(c.Audit.Path)
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		p.Skills = c.Resolve(p.Skills)
		if k := kindNamed(p.Kind); k != nil && p.Spec != nil && k.Resolve != nil {
			k.Resolve(p.Spec, c)
		}
	}
}

// Redacted returns a deep copy safe to print: values of env, headers and
// server tokens are replaced by "***".
func (c *Config) Redacted() *Config {
	r := *c
	r.Providers = make([]Provider, len(c.Providers))
	for i, p := range c.Providers {
		if k := kindNamed(p.Kind); k != nil && p.Spec != nil && k.Redact != nil {
			p.Spec = k.Redact(p.Spec)
		}
		r.Providers[i] = p
	}
	if c.Providers == nil {
		r.Providers = nil
	}
	if c.Server.ClusterKey != "" {
		r.Server.ClusterKey = "***"
	}
	r.Server.Redis.URL = redact.MaskURL(c.Server.Redis.URL)
	r.Index = c.Index.redacted()
	if c.Server.HTTP.Tokens != nil {
		r.Server.HTTP.Tokens = make([]string, len(c.Server.HTTP.Tokens))
		for i := range r.Server.HTTP.Tokens {
			r.Server.HTTP.Tokens[i] = "***"
		}
	}
	return &r
}

func redactMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = "***"
	}
	return out
}

// Provider returns the provider with the given id.
func (c *Config) Provider(id string) (*Provider, bool) {
	for i := range c.Providers {
		if c.Providers[i].ID == id {
			return &c.Providers[i], true
		}
	}
	return nil, false
}

// Error is one problem in a config file.
type Error struct {
	File string
	Line int    // 1-based; 0 when unknown (configs built in code)
	Col  int    // 1-based; 0 when unknown
	Path string // key path such as providers[0].env.API_KEY; "" for the document
	Msg  string
}

func (e Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, "%d:", e.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found, in file order.
type Errors struct {
	List []Error
}

func (e *Errors) Error() string {
	lines := make([]string, len(e.List))
	for i, x := range e.List {
		lines[i] = x.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each Error to errors.As.
func (e *Errors) Unwrap() []error {
	out := make([]error, len(e.List))
	for i, x := range e.List {
		out[i] = x
	}
	return out
}

// AsErrors returns the *Errors inside err, if any.
func AsErrors(err error) (*Errors, bool) {
	var e *Errors
	ok := errors.As(err, &e)
	return e, ok
}

const maxErrors = 100

func newErrors(list []Error) *Errors {
	sortErrors(list)
	list = dedupErrors(list)
	if len(list) > maxErrors {
		last := list[maxErrors-1]
		list = append(list[:maxErrors-1:maxErrors-1], Error{File: last.File, Line: last.Line, Col: last.Col,
			Msg: fmt.Sprintf("too many errors (%d more not shown)", len(list)-maxErrors+1)})
	}
	return &Errors{List: list}
}
