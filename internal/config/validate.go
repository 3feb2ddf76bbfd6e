package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

type validator struct {
	c    *Config
	errs []Error
}

// parent strips the last component of a key path.
func parent(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// pos finds where path is in the file: its value (or, with key, its key),
// else the nearest enclosing entry that is known.
func (v *validator) pos(p string, key bool) Pos {
	m := v.c.meta
	if m == nil {
		return Pos{}
	}
	for q := p; ; q = parent(q) {
		if key {
			if ps, ok := m.key[q]; ok {
				return ps
			}
		}
		if ps, ok := m.val[q]; ok {
			return ps
		}
		if ps, ok := m.key[q]; ok {
			return ps
		}
		if q == "" {
			return Pos{Line: 1, Col: 1}
		}
	}
}

func (v *validator) add(p string, key bool, format string, args ...any) {
	ps := v.pos(p, key)
	file := ""
	if v.c.meta != nil {
		file = v.c.meta.file
	}
	v.errs = append(v.errs, Error{File: file, Line: ps.Line, Col: ps.Col, Path: p, Msg: fmt.Sprintf(format, args...)})
}

// errf reports at the value of path; keyf at its key.
func (v *validator) errf(p, format string, args ...any) { v.add(p, false, format, args...) }
func (v *validator) keyf(p, format string, args ...any) { v.add(p, true, format, args...) }

// show quotes a value for a message, unless it came from the environment.
func (v *validator) show(p, value string) string {
	if v.c.meta != nil {
		if vars := v.c.meta.vars[p]; len(vars) > 0 {
			return from(vars)
		}
	}
	return strconv.Quote(clip(value))
}

func (v *validator) bad(p string) bool { return v.c.meta != nil && v.c.meta.bad[p] }

func (v *validator) line(p string) string {
	if ps := v.pos(p, false); ps.Line > 0 {
		return fmt.Sprintf(" (first at line %d)", ps.Line)
	}
	return ""
}

func (c *Config) validate() []Error {
	v := &validator{c: c}
	if !slices.Contains(Modes, c.Mode) && !v.bad("mode") {
		v.errf("mode", "unknown mode %s (want %s)", v.show("mode", c.Mode), orList(Modes))
	}
	v.local()
	ids := map[string]string{} // id → path of its first use
	for i := range c.Providers {
		pp := index("providers", i)
		if v.bad(pp) {
			continue
		}
		v.provider(&c.Providers[i], pp, ids)
	}
	v.policy()
	h := c.Server.HTTP
	if v.bad("server.http.addr") {
		// already reported
	} else if _, port, err := net.SplitHostPort(h.Addr); err != nil {
		v.errf("server.http.addr", "invalid address %s: want host:port, e.g. 127.0.0.1:8321", v.show("server.http.addr", h.Addr))
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		v.errf("server.http.addr", "invalid port in %s: want a number from 0 to 65535", v.show("server.http.addr", h.Addr))
	}
	for i, t := range h.Tokens {
		if tp := index("server.http.tokens", i); t == "" && !v.bad(tp) {
			v.errf(tp, "empty token%s", v.via(tp))
		}
	}
	v.httpServer(h)
	v.auditPath()
	l := c.Limits
	v.nonNeg("limits.maxResultChars", l.MaxResultChars)
	v.nonNeg("limits.loopGuard.repeatAfter", l.LoopGuard.RepeatAfter)
	v.nonNeg("limits.loopGuard.refuseAfter", l.LoopGuard.RefuseAfter)
	v.duration("limits.loopGuard.coolDown", l.LoopGuard.CoolDown)
	if l.LoopGuard.RepeatAfter > 0 && l.LoopGuard.RefuseAfter > 0 && l.LoopGuard.RefuseAfter < l.LoopGuard.RepeatAfter {
		v.errf("limits.loopGuard.refuseAfter", "refuseAfter (%d) must not be less than repeatAfter (%d)", l.LoopGuard.RefuseAfter, l.LoopGuard.RepeatAfter)
	}
	return v.errs
}

// auditPath checks what serve will open (append, create): the directory must
// exist and the path must not be a directory. It only looks (stat), never
// creates or opens anything.
func (v *validator) auditPath() {
	p := v.c.Audit.Path
	if p == "" || p == AuditOff || v.bad("audit.path") {
		return
	}
	abs := v.c.Resolve(p)
	if st, err := os.Stat(abs); err == nil {
		if st.IsDir() {
			v.errf("audit.path", "%s is a directory: name a file in it, e.g. %s", v.show("audit.path", p), strconv.Quote(clip(filepath.Join(p, "audit.jsonl"))))
		}
		return
	}
	dir := filepath.Dir(abs)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		v.errf("audit.path", "the directory of %s does not exist: create it (mkdir -p %s) or choose another path", v.show("audit.path", p), v.dirShown(dir))
	case err != nil:
		v.errf("audit.path", "cannot use the directory of %s: %v", v.show("audit.path", p), errors.Unwrap(err))
	case !st.IsDir():
		v.errf("audit.path", "the directory of %s is not a directory", v.show("audit.path", p))
	}
}

// dirShown prints a directory unless the audit path came from the environment.
func (v *validator) dirShown(dir string) string {
	if v.c.meta != nil && len(v.c.meta.vars["audit.path"]) > 0 {
		return "its directory"
	}
	return dir
}

// via says which variables a value came from: " (from ${X})".
func (v *validator) via(p string) string {
	if v.c.meta != nil {
		if vars := v.c.meta.vars[p]; len(vars) > 0 {
			return " (from " + strings.TrimPrefix(from(vars), "the value of ") + ")"
		}
	}
	return ""
}

func (v *validator) nonNeg(p string, n int) {
	if n < 0 {
		v.errf(p, "must not be negative, got %d", n)
	}
}

func (v *validator) duration(p string, d Duration) {
	if d.Duration < 0 {
		v.errf(p, "must not be negative, got %s", d)
	}
}

func (v *validator) local() {
	l := v.c.Local
	if l.Dir == "" {
		v.errf("local.dir", "must not be empty (the default is %s)", DefaultLocalDir)
	}
	v.duration("local.timeout", l.Timeout)
}

// kindFields lists the kind-specific keys each kind accepts.
var kindFields = map[string][]string{
	"mcp":     {"command", "args", "cwd", "env", "url", "headers", "trustAnnotations", "prefix"},
	"openapi": {"spec", "baseURL", "headers"},
	"cli":     {"tools", "env", "cwd"},
	"workers": {"preset", "command", "args", "env", "cwd"},
}

func (p *Provider) set(field string) bool {
	switch field {
	case "command":
		return p.Command != ""
	case "args":
		return len(p.Args) > 0
	case "cwd":
		return p.Cwd != ""
	case "env":
		return len(p.Env) > 0
	case "url":
		return p.URL != ""
	case "headers":
		return len(p.Headers) > 0
	case "trustAnnotations":
		return p.TrustAnnotations
	case "prefix":
		return p.Prefix != nil
	case "spec":
		return p.Spec != ""
	case "baseURL":
		return p.BaseURL != ""
	case "tools":
		return p.Tools != nil
	case "preset":
		return p.Preset != ""
	}
	return false
}

var kindSpecific = []string{"command", "args", "cwd", "env", "url", "headers", "trustAnnotations", "prefix", "spec", "baseURL", "tools", "preset"}

func validID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func (v *validator) provider(p *Provider, pp string, ids map[string]string) {
	idp := pp + ".id"
	switch {
	case v.bad(idp):
	case p.ID == "":
		v.errf(pp, `missing required key "id"`)
	case !validID(p.ID):
		v.errf(idp, "invalid id %s: use 1 to %d lowercase letters and digits (it becomes the tool-name prefix)", v.show(idp, p.ID), MaxIDLen)
	case slices.Contains(ReservedIDs, p.ID):
		v.errf(idp, "id %q is reserved (%s)", p.ID, orList(ReservedIDs))
	default:
		if first, dup := ids[p.ID]; dup {
			v.errf(idp, "duplicate provider id %q%s", p.ID, v.line(first))
		} else {
			ids[p.ID] = idp
		}
	}
	kp := pp + ".kind"
	kind := p.Kind
	if v.bad(kp) {
		kind = "" // already reported; the checks below depend on it
	} else if p.Kind == "" {
		v.errf(pp, `missing required key "kind" (want %s)`, orList(Kinds))
	} else if !slices.Contains(Kinds, p.Kind) {
		v.errf(kp, "unknown kind %s (want %s)", v.show(kp, p.Kind), orList(Kinds))
	} else {
		for _, f := range kindSpecific {
			if p.set(f) && !slices.Contains(kindFields[p.Kind], f) {
				v.keyf(pp+"."+f, "%q does not apply to kind %s", f, p.Kind)
			}
		}
	}
	v.duration(pp+".timeout", p.Timeout)
	for i, r := range p.ReadOnly {
		if r == "" && !v.bad(index(pp+".readonly", i)) {
			v.errf(index(pp+".readonly", i), "empty tool name")
		}
	}
	for k := range p.Env {
		if !validVarName(k) {
			v.keyf(joinKey(pp+".env", k), "invalid environment variable name %q: use letters, digits and _, not starting with a digit", clip(k))
		}
	}
	for k := range p.Headers {
		if !validHeaderName(k) {
			v.keyf(joinKey(pp+".headers", k), "invalid header name %q", clip(k))
		}
	}
	if pfx := pp + ".prefix"; p.Prefix != nil && *p.Prefix != "" && *p.Prefix != p.ID && !v.bad(pfx) {
		v.errf(pfx, `prefix %s: the id is the prefix; use "" to expose the tools under their own names, or rename the provider`, v.show(pfx, *p.Prefix))
	}
	present := func(f string) bool { return p.set(f) || v.bad(pp+"."+f) }
	switch kind {
	case "mcp":
		switch {
		case !present("command") && !present("url"):
			v.errf(pp, `kind mcp needs "command" (a stdio server) or "url" (a Streamable HTTP server)`)
		case p.Command != "" && p.URL != "":
			v.keyf(pp+".url", `set either "command" or "url", not both`)
		case present("url"):
			v.url(pp+".url", p.URL)
			for _, f := range []string{"args", "cwd", "env"} {
				if p.set(f) {
					v.keyf(pp+"."+f, `%q applies only to stdio servers (with "command")`, f)
				}
			}
		default:
			if p.set("headers") {
				v.keyf(pp+".headers", `"headers" applies only to HTTP servers (with "url")`)
			}
		}
	case "openapi":
		if !present("spec") {
			v.errf(pp, `kind openapi needs "spec" (the OpenAPI document's path or URL)`)
		}
		if p.BaseURL != "" {
			v.url(pp+".baseURL", p.BaseURL)
		}
	case "cli":
		if len(p.Tools) == 0 && !v.bad(pp+".tools") {
			if p.Tools == nil {
				v.errf(pp, `kind cli needs "tools" (a list of {name, argv, ...})`)
			} else {
				v.errf(pp+".tools", "must list at least one tool")
			}
		}
		names := map[string]string{}
		for i := range p.Tools {
			tp := index(pp+".tools", i)
			if !v.bad(tp) {
				v.cliTool(&p.Tools[i], tp, names)
			}
		}
	case "workers":
		if !present("preset") && !present("command") {
			v.errf(pp, `kind workers needs "preset" (%s) or "command"`, orList(WorkerPresets))
		}
		if p.Preset != "" && !slices.Contains(WorkerPresets, p.Preset) && !v.bad(pp+".preset") {
			v.errf(pp+".preset", "unknown preset %s (want %s, or set command)", v.show(pp+".preset", p.Preset), orList(WorkerPresets))
		}
	}
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c > ' ' && c < 0x7f && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, rune(c))) {
			return false
		}
	}
	return true
}

func (v *validator) url(p, raw string) {
	if v.bad(p) {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.errf(p, "invalid URL %s: want http:// or https:// with a host", v.show(p, raw))
	}
}

func (v *validator) cliTool(t *CLITool, tp string, names map[string]string) {
	np := tp + ".name"
	switch {
	case v.bad(np):
	case t.Name == "":
		v.errf(tp, `missing required key "name"`)
	case !utf8.ValidString(t.Name):
		v.errf(np, "tool name is not valid UTF-8")
	default:
		if first, dup := names[t.Name]; dup {
			v.errf(np, "duplicate tool name %q%s", clip(t.Name), v.line(first))
		} else {
			names[t.Name] = np
		}
	}
	ap := tp + ".argv"
	switch {
	case v.bad(ap):
	case t.Argv == nil:
		v.errf(tp, `missing required key "argv" (the program and its arguments)`)
	case len(t.Argv) == 0:
		v.errf(ap, "must not be empty: give at least the program")
	case t.Argv[0] == "" && !v.bad(index(ap, 0)):
		v.errf(index(ap, 0), "the program (argv[0]) must not be empty")
	}
	v.duration(tp+".timeout", t.Timeout)
	for name, prm := range t.Params {
		pp := joinKey(tp+".params", name)
		if name == "" {
			v.keyf(pp, "empty parameter name")
		}
		if !slices.Contains(ParamTypes, prm.Type) && !v.bad(pp+".type") {
			v.errf(pp+".type", "unknown type %s (want %s)", v.show(pp+".type", prm.Type), orList(ParamTypes))
		}
		if len(prm.Enum) > 0 && prm.Type != "string" {
			v.keyf(pp+".enum", `"enum" needs type string`)
		}
	}
}

func (v *validator) policy() {
	pol := v.c.Policy
	if !slices.Contains(ConfirmModes, pol.Confirm) && !v.bad("policy.confirm") {
		v.errf("policy.confirm", "unknown confirm policy %s (want %s)", v.show("policy.confirm", pol.Confirm), orList(ConfirmModes))
	}
	for _, list := range []struct {
		name string
		pats []string
	}{{"policy.deny", pol.Deny}, {"policy.allow", pol.Allow}} {
		for i, pat := range list.pats {
			p := index(list.name, i)
			if v.bad(p) {
				continue
			}
			if msg := checkGlob(pat); msg != "" {
				v.errf(p, "pattern %s %s", v.show(p, pat), msg)
			}
		}
	}
}

// checkGlob returns why pat is not a useful path.Match pattern over
// canonical names, or "".
func checkGlob(pat string) string {
	if pat == "" {
		return "is empty"
	}
	if _, err := path.Match(pat, ""); err != nil {
		return "is not a valid glob (syntax: * ? [a-z] \\x)"
	}
	inClass := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case inClass:
			if c == ']' {
				inClass = false
			} else if c == '\\' {
				i++
			}
			continue
		case c == '[':
			inClass = true
			continue
		case c == '*' || c == '?':
			continue
		case c == '\\':
			i++
			if i >= len(pat) {
				return "is not a valid glob"
			}
			c = pat[i]
		}
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' {
			continue
		}
		r, _ := utf8.DecodeRuneInString(pat[i:])
		return fmt.Sprintf("can never match: canonical names use only a-z, 0-9 and _ (%q is written z%xz)", r, r)
	}
	return ""
}

// MaxBodyLimit bounds server.http.bodyLimit (1 GiB).
const MaxBodyLimit = 1 << 30

func (v *validator) httpServer(h HTTP) {
	const p = "server.http."
	o := h.OIDC
	switch {
	case o.Issuer != "" && !v.bad(p+"oidc.issuer"):
		u, err := url.Parse(o.Issuer)
		if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" ||
			!(u.Scheme == "https" || u.Scheme == "http" && isLoopbackHost(u.Hostname())) {
			v.errf(p+"oidc.issuer", "invalid issuer %s: want an https:// URL (http:// only for a loopback host), without query or fragment", v.show(p+"oidc.issuer", o.Issuer))
		}
		if o.Audience == "" && !v.bad(p+"oidc.audience") {
			v.errf(p+"oidc", `missing required key "audience" (the "aud" value tokens for this server carry)`)
		}
	case o.Audience != "" && !v.bad(p+"oidc.audience"):
		v.errf(p+"oidc", `missing required key "issuer" (the OpenID Connect issuer URL)`)
	}
	v.duration(p+"oidc.clockSkew", o.ClockSkew)
	if o.ClockSkew.Duration > 5*time.Minute {
		v.errf(p+"oidc.clockSkew", "at most 5m, got %s", o.ClockSkew)
	}
	if h.Resource != "" && !v.bad(p+"resource") {
		u, err := url.Parse(h.Resource)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
			v.errf(p+"resource", "invalid URL %s: want this server's public http(s) URL of /mcp", v.show(p+"resource", h.Resource))
		}
	}
	for i, o := range h.AllowedOrigins {
		ip := index(p+"allowedOrigins", i)
		if v.bad(ip) || o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			v.errf(ip, "invalid origin %s: want scheme://host[:port] such as https://console.example.com, or \"*\"", v.show(ip, o))
		}
	}
	for i, hh := range h.AllowedHosts {
		ip := index(p+"allowedHosts", i)
		if v.bad(ip) || hh == "*" {
			continue
		}
		if hh == "" || strings.ContainsAny(hh, "/ @?#") {
			v.errf(ip, "invalid host %s: want a host name or host:port as clients send it in the Host header, or \"*\"", v.show(ip, hh))
		}
	}
	if h.BodyLimit < 0 || h.BodyLimit > MaxBodyLimit {
		v.errf(p+"bodyLimit", "want a size in bytes from 1 to %d (0 = the default, 4 MiB), got %d", MaxBodyLimit, h.BodyLimit)
	}
	v.nonNeg(p+"rateLimit.perSecond", h.RateLimit.PerSecond)
	v.nonNeg(p+"rateLimit.burst", h.RateLimit.Burst)
	v.duration(p+"sessionTimeout", h.SessionTimeout)
	v.duration(p+"shutdownGrace", h.ShutdownGrace)
}

// isLoopbackHost reports whether a host name (no port) is localhost or a
// loopback IP.
func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}
