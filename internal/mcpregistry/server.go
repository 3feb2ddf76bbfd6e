// Package mcpregistry is a client of MCP server registries: the official
// registry (registry.modelcontextprotocol.io) and any other that serves the
// same API (`GET /v0.1/servers`, `/v0.1/servers/{name}/versions[/{version}]`,
// docs/reference/api/openapi.yaml of github.com/modelcontextprotocol/registry),
// with an offline cache keyed by URL and revalidated with ETags.
//
// It is not internal/registry (the live tool catalog): this package only
// reads what servers exist and how they are installed; internal/cli turns
// one into a provider entry (docs/registry.md).
package mcpregistry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Server is a server.json (the registry's ServerDetail schema, 2025-12-11).
// Fields the runtime does not use (icons, _meta) are kept raw or dropped.
type Server struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Title       string      `json:"title,omitempty"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where the server's source is.
type Repository struct {
	URL       string `json:"url"`
	Source    string `json:"source"`
	ID        string `json:"id,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is one way to run the server locally.
type Package struct {
	RegistryType     string     `json:"registryType"`
	RegistryBaseURL  string     `json:"registryBaseUrl,omitempty"`
	Identifier       string     `json:"identifier"`
	Version          string     `json:"version,omitempty"`
	FileSHA256       string     `json:"fileSha256,omitempty"`
	RuntimeHint      string     `json:"runtimeHint,omitempty"`
	Transport        Transport  `json:"transport"`
	RuntimeArguments []Argument `json:"runtimeArguments,omitempty"`
	PackageArguments []Argument `json:"packageArguments,omitempty"`
	Env              []KeyValue `json:"environmentVariables,omitempty"`
}

// Input is a value the person may have to supply.
type Input struct {
	Description string           `json:"description,omitempty"`
	IsRequired  bool             `json:"isRequired,omitempty"`
	Format      string           `json:"format,omitempty"`
	Value       string           `json:"value,omitempty"`
	IsSecret    bool             `json:"isSecret,omitempty"`
	Default     string           `json:"default,omitempty"`
	Placeholder string           `json:"placeholder,omitempty"`
	Choices     []string         `json:"choices,omitempty"`
	Variables   map[string]Input `json:"variables,omitempty"`
}

// Argument is a positional or named (--flag) command-line argument.
type Argument struct {
	Input
	Type       string `json:"type"`
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// KeyValue is an environment variable or a header.
type KeyValue struct {
	Input
	Name string `json:"name"`
}

// Transport is a package's transport (stdio, streamable-http, sse) or a
// remote (streamable-http, sse, with variables for its URL template).
type Transport struct {
	Type      string           `json:"type"`
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValue       `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Official is the registry-managed metadata of one server version.
type Official struct {
	Status      string    `json:"status,omitempty"`
	PublishedAt time.Time `json:"publishedAt,omitzero"`
	UpdatedAt   time.Time `json:"updatedAt,omitzero"`
	IsLatest    bool      `json:"isLatest,omitempty"`
}

// Entry is one ServerResponse: a server.json and the registry's metadata.
type Entry struct {
	Server Server `json:"server"`
	Meta   struct {
		Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
	} `json:"_meta"`
	// Registry is the base URL the entry came from (not in the wire format).
	Registry string `json:"-"`
}

// Status is the lifecycle status ("active" when the registry says nothing).
func (e *Entry) Status() string {
	if e.Meta.Official == nil || e.Meta.Official.Status == "" {
		return "active"
	}
	return e.Meta.Official.Status
}

// List is a ServerList page.
type List struct {
	Servers  []Entry `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor,omitempty"`
		Count      int    `json:"count,omitempty"`
	} `json:"metadata"`
}

// MaxDocument bounds one response body.
const MaxDocument = 32 << 20

// The schema's patterns and enums (server.schema.json 2025-12-11, as the
// registry's openapi.yaml publishes them).
var (
	namePattern   = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)
	sha256Pattern = regexp.MustCompile(`^[a-f0-9]{64}$`)
	urlPattern    = regexp.MustCompile(`^(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$`)
	// A version range or tag is not a version (the schema's rule).
	rangeVersion = regexp.MustCompile(`^[\^~<>=*]|[ |]|\.(x|X|\*)(\.|$)|^(x|X|\*)$`)
)

// ErrMalformed marks a document that does not follow the schema.
var ErrMalformed = errors.New("malformed server.json")

// DecodeServer decodes and checks one server.json.
func DecodeServer(data []byte) (*Server, error) {
	var s Server
	if err := decodeJSON(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// DecodeEntry decodes and checks one ServerResponse.
func DecodeEntry(data []byte) (*Entry, error) {
	var e Entry
	if err := decodeJSON(data, &e); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := e.Server.Check(); err != nil {
		return nil, err
	}
	return &e, nil
}

// DecodeList decodes a ServerList page. The page itself must be well
// formed; an entry that breaks the schema is dropped and reported in bad
// (one registry's bad entry must not hide the others).
func DecodeList(data []byte) (l *List, bad []error, err error) {
	var raw struct {
		Servers  []json.RawMessage `json:"servers"`
		Metadata json.RawMessage   `json:"metadata"`
	}
	if err := decodeJSON(data, &raw); err != nil {
		return nil, nil, fmt.Errorf("%w: not a server list: %v", ErrMalformed, err)
	}
	if raw.Servers == nil {
		return nil, nil, fmt.Errorf("%w: not a server list: no \"servers\"", ErrMalformed)
	}
	l = &List{}
	if len(raw.Metadata) > 0 && !bytes.Equal(raw.Metadata, []byte("null")) {
		if err := json.Unmarshal(raw.Metadata, &l.Metadata); err != nil {
			return nil, nil, fmt.Errorf("%w: metadata: %v", ErrMalformed, err)
		}
	}
	for i, r := range raw.Servers {
		e, err := DecodeEntry(r)
		if err != nil {
			bad = append(bad, fmt.Errorf("servers[%d]: %w", i, err))
			continue
		}
		l.Servers = append(l.Servers, *e)
	}
	return l, bad, nil
}

func decodeJSON(data []byte, v any) error {
	if len(data) > MaxDocument {
		return fmt.Errorf("document larger than %d bytes", MaxDocument)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the document")
	}
	return nil
}

// Check applies the schema's rules that matter to installing a server.
func (s *Server) Check() error {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	switch {
	case s.Name == "":
		bad("name is missing")
	case len(s.Name) < 3 || len(s.Name) > 200 || !namePattern.MatchString(s.Name):
		bad("name %q is not reverse-DNS namespace/name", clip(s.Name))
	}
	if s.Description == "" {
		bad("description is missing")
	}
	if err := checkVersion(s.Version); err != "" {
		bad("version: %s", err)
	}
	for i, p := range s.Packages {
		at := fmt.Sprintf("packages[%d]", i)
		if p.RegistryType == "" {
			bad("%s.registryType is missing", at)
		}
		if p.Identifier == "" {
			bad("%s.identifier is missing", at)
		}
		if p.Version != "" {
			if err := checkVersion(p.Version); err != "" {
				bad("%s.version: %s", at, err)
			}
		}
		if p.FileSHA256 != "" && !sha256Pattern.MatchString(p.FileSHA256) {
			bad("%s.fileSha256 is not 64 lowercase hex digits", at)
		}
		if p.RegistryType == "mcpb" && p.FileSHA256 == "" {
			bad("%s: an mcpb package needs fileSha256", at)
		}
		switch p.Transport.Type {
		case "stdio":
		case "streamable-http", "sse":
			if !urlPattern.MatchString(p.Transport.URL) {
				bad("%s.transport.url %q is not an http(s) URL or template", at, clip(p.Transport.URL))
			}
		case "":
			bad("%s.transport.type is missing", at)
		default:
			bad("%s.transport.type %q is not stdio, streamable-http or sse", at, clip(p.Transport.Type))
		}
		for j, a := range slicesConcat(p.RuntimeArguments, p.PackageArguments) {
			switch a.Type {
			case "positional":
				if a.ValueHint == "" && a.Value == "" {
					bad("%s: argument %d: a positional argument needs valueHint or value", at, j)
				}
			case "named":
				if a.Name == "" {
					bad("%s: argument %d: a named argument needs a name", at, j)
				}
			default:
				bad("%s: argument %d: type %q is not positional or named", at, j, clip(a.Type))
			}
		}
		for j, kv := range p.Env {
			if kv.Name == "" {
				bad("%s.environmentVariables[%d].name is missing", at, j)
			}
		}
	}
	for i, r := range s.Remotes {
		at := fmt.Sprintf("remotes[%d]", i)
		switch r.Type {
		case "streamable-http", "sse":
		default:
			bad("%s.type %q is not streamable-http or sse", at, clip(r.Type))
		}
		if !urlPattern.MatchString(r.URL) {
			bad("%s.url %q is not an http(s) URL or template", at, clip(r.URL))
		}
		for j, h := range r.Headers {
			if h.Name == "" {
				bad("%s.headers[%d].name is missing", at, j)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	who := "server.json"
	if s.Name != "" && namePattern.MatchString(s.Name) {
		who = s.Name
	}
	return fmt.Errorf("%w: %s: %s", ErrMalformed, who, strings.Join(errs, "; "))
}

func checkVersion(v string) string {
	switch {
	case v == "":
		return "missing"
	case len(v) > 255:
		return "longer than 255 characters"
	case strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Sprintf("%q holds a space or a control character", clip(v))
	case strings.EqualFold(v, "latest"):
		return `"latest" is not a version (pin an exact one)`
	case rangeVersion.MatchString(v):
		return fmt.Sprintf("%q is a range, not an exact version", clip(v))
	}
	return ""
}

func slicesConcat(a, b []Argument) []Argument {
	return append(append(make([]Argument, 0, len(a)+len(b)), a...), b...)
}

// clip keeps messages short whatever a registry sends.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
