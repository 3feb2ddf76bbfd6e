package mcpregistry

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Plan is what a server.json becomes in agent-tools.yaml: one kind mcp
// provider entry, its version pinned exactly.
type Plan struct {
	Name, Version, Registry string
	Description             string
	// Source says what runs: "npm @scope/pkg@1.2.3", "remote streamable-http".
	Source string
	// Command and Args run a package over stdio; URL (and Headers) reach
	// a remote.
	Command string
	Args    []string
	Env     []Var
	URL     string
	Headers []Var
	// Notes are comments on the entry (optional variables, what to set).
	Notes []string
	// Needs are the variables the entry references that are not set in
	// the environment: the entry is written disabled until they are.
	Needs []string
	// Bundle is an mcpb package still to fetch (Plan.FetchBundle).
	Bundle *Bundle
	// Keyring lists the keyring items (SERVICE/ACCOUNT) the entry's
	// secret references name (Choice.Keyring).
	Keyring []string
	// MissingKeyring are the Keyring items not stored yet (the caller
	// checks): the entry is written disabled until they are.
	MissingKeyring []string

	keyringService string
	// allow are the --allow-args values, and whether each let a refusal
	// through (refuse.go).
	allow map[string]bool
}

// Var is one env: or headers: value: a literal, or ${VAR} references.
type Var struct {
	Key, Value string
	Secret     bool
	Comment    string
}

// Choice selects what of a server.json to install.
type Choice struct {
	// Package is a registryType (npm, pypi, oci, nuget, mcpb); Remote
	// picks the first remote. Neither: the first package this runtime can
	// run, else the first remote.
	Package string
	Remote  bool
	// Keyring, when set, is the keyring service secret values are
	// referenced in: ${keyring:SERVICE/NAME} (internal/secrets) instead of
	// ${NAME} from the environment.
	Keyring string
	// AllowArgs are runtime arguments the person lets through, each named
	// exactly as its refusal prints it (--allow-args; refuse.go).
	AllowArgs []string
}

// Runnable are the package types Plan turns into a command (mcpb through
// FetchBundle).
var Runnable = []string{"npm", "pypi", "oci", "nuget", "mcpb"}

var templateVar = regexp.MustCompile(`\{([a-zA-Z_][a-zA-Z0-9_]*)\}`)

// PlanFor maps s to a provider entry. lookupEnv says which referenced
// variables are set (they are never read into the plan).
func PlanFor(s *Server, ch Choice, lookupEnv func(string) (string, bool)) (*Plan, error) {
	allow, err := ParseAllowArgs(ch.AllowArgs)
	if err != nil {
		return nil, err
	}
	p := &Plan{Name: s.Name, Version: s.Version, Description: s.Description, keyringService: ch.Keyring, allow: allow}
	if s.Title != "" && p.Description == "" {
		p.Description = s.Title
	}
	var pkg *Package
	var remote *Transport
	switch {
	case ch.Remote:
		if len(s.Remotes) == 0 {
			return nil, fmt.Errorf("%s@%s has no remote (it has packages: %s)", s.Name, s.Version, pkgTypes(s))
		}
		remote = &s.Remotes[0]
	case ch.Package != "":
		for i := range s.Packages {
			if s.Packages[i].RegistryType == ch.Package {
				pkg = &s.Packages[i]
				break
			}
		}
		if pkg == nil {
			return nil, fmt.Errorf("%s@%s has no %s package (it has: %s)", s.Name, s.Version, ch.Package, pkgTypes(s))
		}
	default:
		for i := range s.Packages {
			if slices.Contains(Runnable, s.Packages[i].RegistryType) && s.Packages[i].Transport.Type == "stdio" {
				pkg = &s.Packages[i]
				break
			}
		}
		if pkg == nil && len(s.Remotes) > 0 {
			remote = &s.Remotes[0]
		}
		if pkg == nil && remote == nil {
			return nil, fmt.Errorf("%s@%s has nothing this runtime can run (packages: %s; runnable: %s over stdio, or a remote)",
				s.Name, s.Version, pkgTypes(s), strings.Join(Runnable, ", "))
		}
	}
	refs := map[string]bool{}
	if remote != nil {
		if err := p.remote(remote, refs); err != nil {
			return nil, err
		}
	} else if err := p.pkg(pkg, refs); err != nil {
		return nil, err
	}
	if err := p.checkEnv(); err != nil {
		return nil, err
	}
	if p.Bundle == nil { // a bundle's manifest is checked once fetched (FetchBundle)
		if err := unusedAllow(p.allow, append([]string{p.Command}, p.Args...)); err != nil {
			return nil, err
		}
	}
	for _, v := range sortedKeys(refs) {
		if _, ok := lookupEnv(v); !ok {
			p.Needs = append(p.Needs, v)
		}
	}
	return p, nil
}

func (p *Plan) pkg(pk *Package, refs map[string]bool) error {
	at := fmt.Sprintf("%s@%s: %s package %q", p.Name, p.Version, pk.RegistryType, pk.Identifier)
	if pk.Transport.Type != "stdio" {
		return fmt.Errorf("%s serves %s on its own port; only stdio packages are run (use a remote instead)", at, pk.Transport.Type)
	}
	version := pk.Version
	if version == "" && pk.RegistryType != "oci" && pk.RegistryType != "mcpb" {
		return fmt.Errorf("%s has no version: refused (versions are pinned exactly)", at)
	}
	rt, err := p.args(pk.RuntimeArguments, refs)
	if err != nil {
		return fmt.Errorf("%s: runtimeArguments: %w", at, err)
	}
	runtimeArgs := rt
	pa, err := p.args(pk.PackageArguments, refs)
	if err != nil {
		return fmt.Errorf("%s: packageArguments: %w", at, err)
	}
	for _, kv := range pk.Env {
		if v, ok := p.value(kv, refs); ok {
			p.Env = append(p.Env, v)
		}
	}
	// The runtime's own options (before the package) must not change what
	// is fetched or run (refuse.go); a bare value there would be run in
	// the package's place.
	if rt, ok := runtimeFor[pk.RegistryType]; ok {
		if err := checkRuntimeArgs(rt, "runtimeArguments", runtimeArgs, "npx, uvx, docker and dnx take a bare value before the package as the package (or image) to run in its place", p.allow); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
	}
	switch pk.RegistryType {
	case "npm":
		if !safeIdent(pk.Identifier) || strings.Contains(pk.Identifier[1:], "@") {
			return fmt.Errorf("%s: not an npm package name", at)
		}
		p.Command = "npx"
		p.Args = append(append(append([]string{"-y"}, rt...), pk.Identifier+"@"+version), pa...)
	case "pypi":
		if !safeIdent(pk.Identifier) || strings.ContainsAny(pk.Identifier, "=<>@") {
			return fmt.Errorf("%s: not a PyPI package name", at)
		}
		p.Command = "uvx"
		p.Args = append(append(append([]string{}, rt...), pk.Identifier+"=="+version), pa...)
	case "nuget":
		if !safeIdent(pk.Identifier) || strings.Contains(pk.Identifier, "@") {
			return fmt.Errorf("%s: not a NuGet package id", at)
		}
		p.Command = "dnx"
		p.Args = append(append(append([]string{}, rt...), pk.Identifier+"@"+version, "--yes"), pa...)
		if len(pa) > 0 {
			p.Args = slices.Insert(p.Args, len(p.Args)-len(pa), "--")
		}
	case "oci":
		image, err := ociRef(pk.Identifier, version)
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		args := []string{"run", "-i", "--rm"}
		for _, e := range p.Env { // docker passes the variables it is told of
			args = append(args, "-e", e.Key)
		}
		p.Command = "docker"
		p.Args = append(append(append(args, rt...), image), pa...)
	case "mcpb":
		// The bundle is fetched, checked against fileSha256 and unpacked
		// by FetchBundle, which sets the command from its manifest.
		p.Bundle = &Bundle{URL: pk.Identifier, SHA256: pk.FileSHA256}
		p.Source = "mcpb " + pk.Identifier
		return nil
	default:
		return fmt.Errorf("%s: registry type %q is not one this runtime runs (%s)", at, pk.RegistryType, strings.Join(Runnable, ", "))
	}
	switch pk.RegistryType {
	case "oci":
		p.Source = "oci " + p.Args[len(p.Args)-len(pa)-1]
	case "pypi":
		p.Source = "pypi " + pk.Identifier + "==" + version
	default:
		p.Source = pk.RegistryType + " " + pk.Identifier + "@" + version
	}
	return nil
}

// runtimeFor is the command each package type runs (its options are
// RuntimeArgRules').
var runtimeFor = map[string]string{"npm": "npx", "pypi": "uvx", "oci": "docker", "nuget": "dnx"}

// checkEnv refuses environment names that load code or change what the
// runtime fetches (refuse.go): --allow-args does not let them through.
func (p *Plan) checkEnv() error {
	for _, v := range p.Env {
		if why := RefusedEnv(v.Key); why != "" {
			return fmt.Errorf("%s@%s: %w", p.Name, p.Version, &RefusedArg{Arg: v.Key, Where: "environmentVariables", Why: why +
				"; a registry entry may not set it (set it in the entry yourself, after adding it, if you trust it)"})
		}
	}
	return nil
}

// unsetVar stands for a URL variable the person supplies (probeURL).
const unsetVar = "agent-tools-unset-variable"

// probeURL is the remote's URL with its variables' values or defaults,
// and unsetVar for the others: what CheckRemoteURL looks at.
func probeURL(tmpl string, vars map[string]Input) string {
	return templateVar.ReplaceAllStringFunc(tmpl, func(m string) string {
		in := vars[m[1:len(m)-1]]
		switch {
		case in.Value != "":
			return in.Value
		case in.Default != "":
			return in.Default
		}
		return unsetVar
	})
}

func (p *Plan) remote(r *Transport, refs map[string]bool) error {
	u, err := fill(r.URL, r.Variables, refs, nil)
	if err != nil {
		return fmt.Errorf("%s@%s: remote url: %w", p.Name, p.Version, err)
	}
	// Plain http and link-local or metadata hosts are refused; a scheme or
	// host the person supplies (a variable without a default) is theirs.
	if probe := probeURL(r.URL, r.Variables); !strings.Contains(probe[:min(len(probe), schemeHostEnd(probe))], unsetVar) {
		if err := CheckRemoteURL(probe); err != nil {
			return fmt.Errorf("%s@%s: remote url: %w", p.Name, p.Version, err)
		}
	}
	p.URL = u
	for _, h := range r.Headers {
		if v, ok := p.value(h, refs); ok {
			p.Headers = append(p.Headers, v)
		}
	}
	p.Source = "remote " + r.Type
	if r.Type == "sse" {
		p.Notes = append(p.Notes, "the server speaks the older HTTP+SSE transport")
	}
	return nil
}

// schemeHostEnd is where a URL's scheme and host end (its path, query or
// fragment starts).
func schemeHostEnd(u string) int {
	start := 0
	if i := strings.Index(u, "://"); i >= 0 {
		start = i + 3
	}
	if j := strings.IndexAny(u[start:], "/?#"); j >= 0 {
		return start + j
	}
	return len(u)
}

// value maps an environment variable or header to a value with
// references; ok is false for an optional one left out (noted).
func (p *Plan) value(kv KeyValue, refs map[string]bool) (Var, bool) {
	ref := envName(kv.Name)
	v := Var{Key: kv.Name, Secret: kv.IsSecret}
	desc := oneLine(kv.Description)
	switch {
	case kv.Value != "" && (kv.IsSecret || templateVar.MatchString(kv.Value)):
		s, err := fill(kv.Value, kv.Variables, refs, func(name string, in Input) string {
			if in.IsSecret || kv.IsSecret {
				return p.secretRef(name, refs)
			}
			return ""
		})
		if err != nil {
			s = p.secretRef(kv.Name, refs)
		}
		v.Value = s
	case kv.Value != "":
		v.Value = escape(kv.Value) // fixed by the publisher
	case kv.IsSecret:
		v.Value = p.secretRef(kv.Name, refs)
	case kv.Default != "":
		v.Value = "${" + ref + ":-" + escapeDefault(kv.Default) + "}"
	case kv.IsRequired:
		v.Value, refs[ref] = "${"+ref+"}", true
	default:
		note := fmt.Sprintf("optional %s: not set", kv.Name)
		if desc != "" {
			note += " (" + desc + ")"
		}
		p.Notes = append(p.Notes, note)
		return v, false
	}
	switch {
	case v.Secret && p.keyringService != "":
		var keys []string
		for _, k := range keyringKeys(v.Value) {
			keys = append(keys, "agent-tools secrets set "+k)
		}
		v.Comment = "secret, in the keyring (" + strings.Join(keys, "; ") + "); never written here"
	case v.Secret:
		v.Comment = "secret: set " + strings.Join(refNames(v.Value), ", ") + " in the environment; never written here"
	case kv.IsRequired:
		v.Comment = "required"
	}
	if desc != "" {
		if v.Comment != "" {
			v.Comment += ": "
		}
		v.Comment += desc
	}
	return v, true
}

// args renders arguments: fixed values verbatim, {templates} and values
// the person supplies as ${VAR} references.
func (p *Plan) args(as []Argument, refs map[string]bool) ([]string, error) {
	var out []string
	for _, a := range as {
		val := a.Value
		switch {
		case val != "":
			s, err := fill(val, a.Variables, refs, nil)
			if err != nil {
				return nil, err
			}
			val = s
		case a.Default != "":
			if strings.ContainsAny(a.Default, "\n\r") {
				return nil, fmt.Errorf("a default with a line break: refused")
			}
			val = escape(a.Default)
		case a.IsRequired || a.Type == "positional":
			name := a.ValueHint
			if name == "" {
				name = strings.TrimLeft(a.Name, "-")
			}
			ref := envName(name)
			val, refs[ref] = "${"+ref+"}", true
		default:
			p.Notes = append(p.Notes, fmt.Sprintf("optional argument %s: not set", a.Name))
			continue
		}
		if a.Type == "named" {
			if strings.HasPrefix(a.Name, "-") && !strings.ContainsAny(a.Name, " =") {
				out = append(out, a.Name+"="+val)
			} else {
				out = append(out, a.Name, val)
			}
			continue
		}
		out = append(out, val)
	}
	return out, nil
}

// fill replaces {var} with the variable's default, or a ${VAR} reference.
func fill(tmpl string, vars map[string]Input, refs map[string]bool, ref func(string, Input) string) (string, error) {
	if strings.ContainsAny(tmpl, "\n\r") {
		return "", fmt.Errorf("a value with a line break: refused")
	}
	out := templateVar.ReplaceAllStringFunc(escape(tmpl), func(m string) string {
		name := m[1 : len(m)-1]
		in, ok := vars[name]
		if ref != nil {
			if r := ref(name, in); r != "" {
				return r
			}
		}
		if ok && in.Value != "" && !in.IsSecret {
			return escape(in.Value)
		}
		if ok && in.Default != "" && !in.IsSecret {
			return "${" + envName(name) + ":-" + escapeDefault(in.Default) + "}"
		}
		refs[envName(name)] = true
		return "${" + envName(name) + "}"
	})
	return out, nil
}

// secretRef is the reference a secret value is written as: the keyring
// item SERVICE/NAME (noted in p.Keyring), or ${NAME} from the
// environment (noted in refs).
func (p *Plan) secretRef(name string, refs map[string]bool) string {
	n := envName(name)
	if p.keyringService == "" {
		refs[n] = true
		return "${" + n + "}"
	}
	key := p.keyringService + "/" + n
	if !slices.Contains(p.Keyring, key) {
		p.Keyring = append(p.Keyring, key)
	}
	return "${keyring:" + key + "}"
}

var keyringPattern = regexp.MustCompile(`\$\{keyring:([^}]+)\}`)

func keyringKeys(v string) []string {
	var out []string
	for _, m := range keyringPattern.FindAllStringSubmatch(v, -1) {
		out = append(out, m[1])
	}
	return out
}

// envName turns a header or variable name into an environment variable
// name: Authorization → AUTHORIZATION, api-key → API_KEY.
func envName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || out[0] >= '0' && out[0] <= '9' {
		out = "V_" + out
	}
	return out
}

var refPattern = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

func refNames(v string) []string {
	var out []string
	for _, m := range refPattern.FindAllStringSubmatch(v, -1) {
		out = append(out, m[1])
	}
	return out
}

// escape makes a literal safe from ${VAR} interpolation.
func escape(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// escapeDefault writes a default inside ${VAR:-…}.
func escapeDefault(s string) string {
	return strings.NewReplacer("$", "$$", "}", "").Replace(s)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = strings.ToValidUTF8(s[:120], "") + "…"
	}
	return s
}

// safeIdent refuses identifiers that are empty, start with a dash (an
// option to npx, uvx, dnx or docker) or hold spaces or control characters.
func safeIdent(s string) bool {
	return s != "" && s[0] != '-' && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// ociRef pins an image: its tag or digest, or version as the tag. An
// image without either is refused (it would run :latest).
func ociRef(id, version string) (string, error) {
	if !safeIdent(id) {
		return "", fmt.Errorf("not an image reference")
	}
	if strings.Contains(id, "@sha256:") {
		return id, nil
	}
	last := id[strings.LastIndex(id, "/")+1:]
	if i := strings.LastIndex(last, ":"); i >= 0 {
		if tag := last[i+1:]; tag == "latest" {
			return "", fmt.Errorf("the image's tag is latest: refused (versions are pinned exactly)")
		}
		return id, nil
	}
	if version == "" || version == "latest" {
		return "", fmt.Errorf("the image has no tag or digest: refused (it would run latest)")
	}
	return id + ":" + version, nil
}

func pkgTypes(s *Server) string {
	var ts []string
	for _, p := range s.Packages {
		ts = append(ts, p.RegistryType)
	}
	if len(ts) == 0 {
		return "none"
	}
	return strings.Join(ts, ", ")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// DefaultID is a provider id for a server name: the last part of the name,
// lowercase letters and digits only ("io.github.x/server-everything" →
// "servereverything"), at most 32 characters.
func DefaultID(name string) string {
	last := name[strings.LastIndex(name, "/")+1:]
	for _, cut := range []string{"mcp-server-", "server-", "mcp-"} {
		if t := strings.TrimPrefix(strings.ToLower(last), cut); t != "" && t != strings.ToLower(last) {
			last = t
			break
		}
	}
	last = strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(last), "-mcp-server"), "-mcp")
	var b strings.Builder
	for _, r := range last {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	id := b.String()
	if len(id) > 32 {
		id = id[:32]
	}
	if id == "" {
		id = "server"
	}
	return id
}
