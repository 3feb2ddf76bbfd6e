package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
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

	"github.com/agent-tools/agent-tools/internal/naming"
)

// Validator checks a decoded Config's semantic rules and reports each
// problem at the position its key path had in the file. A kind's Validate
// gets it (the exported methods in kinds.go).
type Validator struct {
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
func (v *Validator) pos(p string, key bool) Pos {
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

func (v *Validator) add(p string, key bool, format string, args ...any) {
	ps := v.pos(p, key)
	file := ""
	if v.c.meta != nil {
		file = v.c.meta.file
	}
	v.errs = append(v.errs, Error{File: file, Line: ps.Line, Col: ps.Col, Path: p, Msg: fmt.Sprintf(format, args...)})
}

// errf reports at the value of path; keyf at its key.
func (v *Validator) errf(p, format string, args ...any) { v.add(p, false, format, args...) }
func (v *Validator) keyf(p, format string, args ...any) { v.add(p, true, format, args...) }

// show quotes a value for a message, unless it came from the environment.
func (v *Validator) show(p, value string) string {
	if v.c.meta != nil {
		if vars := v.c.meta.vars[p]; len(vars) > 0 {
			return from(vars)
		}
	}
	return strconv.Quote(clip(value))
}

func (v *Validator) bad(p string) bool { return v.c.meta != nil && v.c.meta.bad[p] }

func (v *Validator) line(p string) string {
	if ps := v.pos(p, false); ps.Line > 0 {
		return fmt.Sprintf(" (first at line %d)", ps.Line)
	}
	return ""
}

func (c *Config) validate() []Error {
	v := &Validator{c: c}
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
	v.profilesAndRules() // profiles.go
	v.quotas()           // quotas.go
	v.validateCache()    // cache.go
	h := c.Server.HTTP
	if v.bad("server.http.addr") {
		// already reported
	} else if _, port, err := net.SplitHostPort(h.Addr); err != nil {
		v.errf("server.http.addr", "invalid address %s: want host:port, e.g. 127.0.0.1:8321", v.show("server.http.addr", h.Addr))
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		v.errf("server.http.addr", "invalid port in %s: want a number from 0 to 65535", v.show("server.http.addr", h.Addr))
	}
	v.tokens(h) // tokens.go
	v.httpServer(h)
	v.auditPath()
	v.validateSecrets() // secretrefs.go
	v.validateCluster(c.Server)
	v.nonNeg("code.maxCalls", c.Code.MaxCalls)
	v.nonNeg("code.concurrency", c.Code.Concurrency)
	v.nonNeg("code.maxConcurrent", c.Code.MaxConcurrent)
	v.nonNeg("code.maxPerIdentity", c.Code.MaxPerIdentity)
	v.duration("code.timeout", c.Code.Timeout)
	v.duration("code.cpu", c.Code.CPU)
	if cpu := c.Code.CPU.Duration; cpu > 0 && cpu < time.Second {
		v.errf("code.cpu", "want at least 1s (processor time is limited in whole seconds), got %s", c.Code.CPU)
	}
	if m := c.Code.Memory; m != 0 && m < MinCodeMemory {
		v.errf("code.memory", "want at least %d MiB (a script's process needs room for the interpreter), got %d bytes", MinCodeMemory>>20, m)
	}
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
func (v *Validator) auditPath() {
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
func (v *Validator) dirShown(dir string) string {
	if v.c.meta != nil && len(v.c.meta.vars["audit.path"]) > 0 {
		return "its directory"
	}
	return dir
}

// via says which variables a value came from: " (from ${X})".
func (v *Validator) via(p string) string {
	if v.c.meta != nil {
		if vars := v.c.meta.vars[p]; len(vars) > 0 {
			return " (from " + strings.TrimPrefix(from(vars), "the value of ") + ")"
		}
	}
	return ""
}

func (v *Validator) nonNeg(p string, n int) {
	if n < 0 {
		v.errf(p, "must not be negative, got %d", n)
	}
}

func (v *Validator) duration(p string, d Duration) {
	if d.Duration < 0 {
		v.errf(p, "must not be negative, got %s", d)
	}
}

func (v *Validator) local() {
	l := v.c.Local
	if l.Dir == "" {
		v.errf("local.dir", "must not be empty (the default is %s)", DefaultLocalDir)
	}
	v.duration("local.timeout", l.Timeout)
}

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

func (v *Validator) provider(p *Provider, pp string, ids map[string]string) {
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
		v.errf(pp, `missing required key "kind" (want %s)`, orList(KindNames()))
	} else if h := anyKindNamed(p.Kind); h != nil && h.Section != "" {
		v.errf(kp, "kind %s is the runtime's own: configure it under %s:, not providers: (want %s)", v.show(kp, p.Kind), h.Section, orList(KindNames()))
	} else if kindNamed(p.Kind) == nil {
		v.errf(kp, "unknown kind %s (want %s)", v.show(kp, p.Kind), orList(KindNames()))
	}
	v.duration(pp+".timeout", p.Timeout)
	for i, r := range p.ReadOnly {
		if r == "" && !v.bad(index(pp+".readonly", i)) {
			v.errf(index(pp+".readonly", i), "empty tool name")
		}
	}
	if kd := kindNamed(kind); kd != nil {
		if p.Spec == nil || p.Spec.Kind() != kd.Name {
			p.Spec = kd.NewSpec() // a code-built entry: check it as empty
		}
		kd.Validate(v, p, pp)
	}
}

// ValidHeaderName reports whether k is an HTTP header name (an RFC 9110 token).
func ValidHeaderName(k string) bool {
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

func (v *Validator) url(p, raw string) {
	if v.bad(p) {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.errf(p, "invalid URL %s: want http:// or https:// with a host", v.show(p, raw))
	}
}

func (v *Validator) policy() {
	pol := v.c.Policy
	v.duration("policy.approvalTimeout", pol.ApprovalTimeout)
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
			if msg := checkGlob(pat, v.c.Naming == string(naming.Lossless)); msg != "" {
				v.errf(p, "pattern %s %s", v.show(p, pat), msg)
			}
		}
	}
}

// checkGlob returns why pat is not a useful path.Match pattern over
// canonical names, or "". Only lossless names have a closed alphabet;
// readable ones (and passthrough names) are checked against the loaded
// tools at run time instead (doctor, the load log).
func checkGlob(pat string, lossless bool) string {
	if pat == "" {
		return "is empty"
	}
	if _, err := path.Match(pat, ""); err != nil {
		return "is not a valid glob (syntax: * ? [a-z] \\x)"
	}
	if !lossless {
		return ""
	}
	inClass := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case inClass:
			switch c {
			case ']':
				inClass = false
			case '\\':
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

func (v *Validator) httpServer(h HTTP) {
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
	v.duration(p+"bodyTimeout", h.BodyTimeout)
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

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
