package config

import (
	"cmp"
	"net/url"
	"slices"
	"strings"

	"github.com/agent-tools/agent-tools/internal/redact"
)

// Secret is one value the config interpolated from the environment into a
// secret-bearing place. The runtime's redactor (internal/redact) replaces
// Value by Name wherever text leaves the process.
type Secret struct {
	// Name is what replaces the value, built with redact.Marker:
	// "[redacted: VAR]", for URL userinfo built from two variables
	// "[redacted: USER]:[redacted: PASS]", "[redacted]" for a credential
	// written literally. Never a "${VAR}" reference, which would read as
	// an interpolation that never ran.
	Name  string
	Value string
}

// Secrets lists the values interpolated from ${VAR} into secret-bearing
// places, collected while the file was decoded (nil for configs built in
// code). Places are recognised by where they are, not by the variable's
// name: every value under an auth, headers/header, env, login, args/argv or
// server.http.tokens key, any key whose name says token, secret, password,
// key, auth, credential or cookie, and every URL the config holds (any value
// with "://" or under a key named url, spec, issuer or resource): of a URL,
// the userinfo (user, password and the user:password pair, which the HTTP
// client sends base64-encoded), the variables in its path and query, and
// literal query values under a name that says credential (access_token=…).
// A variable that only supplies a URL's scheme, host or port is not a
// secret. Values shorter than 6 characters are left out by the redactor,
// not here.
//
// Callers that load a config for serving register them:
//
//	for _, s := range cfg.Secrets() { redact.Add(s.Name, s.Value) }
func (c *Config) Secrets() []Secret {
	if c == nil || c.meta == nil {
		return nil
	}
	return c.meta.secrets
}

// secretSections are keys whose whole subtree is secret-bearing wherever
// they appear in the file (provider kinds, login blocks, index embeddings).
var secretSections = map[string]bool{
	"auth": true, "headers": true, "header": true, "env": true, "login": true,
	"args": true, "argv": true, "tokens": true, "basic": true, "body": true,
	"secrets": true, // secrets.commands: a vault CLI's argv may carry a session token
}

// secretWords mark a key as secret-bearing by its own name.
var secretWords = []string{"token", "secret", "password", "passwd", "key", "auth", "credential", "cookie", "bearer", "session", "sig"}

// pathKeys splits a key path (providers[2].auth.login.body."x-y") into its
// lower-cased keys.
func pathKeys(path string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' }) {
		f = strings.ToLower(strings.Trim(f, `]"`))
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

func secretKey(k string) bool {
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// noteSecrets is called by the decoder for every interpolated scalar: it
// keeps the variables' values when path is a secret-bearing place.
func (d *Decoder) noteSecrets(path string, res interpolation) {
	if len(res.vars) == 0 {
		return
	}
	keys := pathKeys(path)
	lk := ""
	if len(keys) > 0 {
		lk = keys[len(keys)-1]
	}
	secret := secretKey(lk)
	for _, k := range keys[:max(len(keys)-1, 0)] {
		secret = secret || secretSections[k]
	}
	// A key named env or args holds its values directly (env: [...]).
	secret = secret || secretSections[lk]
	isURL := strings.Contains(res.value, "://") || strings.HasSuffix(lk, "url") ||
		lk == "issuer" || lk == "resource" || lk == "spec" || lk == "endpoint"
	if !secret && !isURL {
		return
	}
	var origin string // scheme://host:port of a URL: not secret
	if isURL {
		u, err := url.Parse(res.value)
		switch {
		case err == nil && u.Host != "":
			d.urlSecrets(u, res)
			if !secret {
				origin = u.Scheme + "://" + u.Host
			}
		case !secret:
			return // a file path under spec: (${HOME}/api.yaml) holds no credential
		}
	}
	for i, name := range res.vars {
		v := res.vals[i]
		if v == "" || (origin != "" && strings.Contains(origin, v) && !inUserinfo(res.value, v)) {
			continue
		}
		d.meta.secrets = append(d.meta.secrets, Secret{Name: redact.Marker(name), Value: v})
	}
}

// urlSecrets registers the parts of an interpolated URL that carry
// credentials however they were written: the userinfo pair (sent as Basic
// base64(user:pass)) and the password, and the values of query parameters
// whose names say credential even when the file spells them literally.
func (d *Decoder) urlSecrets(u *url.URL, res interpolation) {
	if u.User != nil {
		user := u.User.Username()
		if p, ok := u.User.Password(); ok && p != "" {
			d.meta.secrets = append(d.meta.secrets, Secret{Name: nameFrom(res, p), Value: p})
			if user != "" {
				d.meta.secrets = append(d.meta.secrets, Secret{Name: userinfoName(res, user, p), Value: user + ":" + p})
			}
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return
	}
	for k, vs := range q {
		if !secretKey(strings.ToLower(k)) {
			continue
		}
		for _, v := range vs {
			if v != "" {
				d.meta.secrets = append(d.meta.secrets, Secret{Name: nameFrom(res, v), Value: v})
			}
		}
	}
}

// nameFrom names a value by the variables it was built from; a literal
// value (no variable in it) is shown as redact.Redacted.
func nameFrom(res interpolation, v string) string {
	return markVars(res, v)
}

// markVars is text with each variable's value replaced by its marker, in
// one pass (a value is never looked for inside a marker already placed);
// redact.Redacted when no variable's value is in it: a value written
// literally is never named by itself.
func markVars(res interpolation, text string) string {
	type pair struct{ val, name string }
	var pairs []pair
	for i, n := range res.vars {
		if res.vals[i] != "" {
			pairs = append(pairs, pair{res.vals[i], n})
		}
	}
	// Longest value first: at one position the longer one wins.
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(len(b.val), len(a.val)) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.val, redact.Marker(p.name))
	}
	if len(args) == 0 {
		return redact.Redacted
	}
	name := strings.NewReplacer(args...).Replace(text)
	if name == text {
		return redact.Redacted
	}
	return name
}

// literalURL registers the credentials of a URL written without variables
// (a password in its userinfo, access_token=… in its query): the file is
// not published, but the runtime's outputs quote configured URLs.
func (d *Decoder) literalURL(res interpolation) {
	if u, err := url.Parse(res.value); err == nil && u.Host != "" && (u.User != nil || u.RawQuery != "") {
		d.urlSecrets(u, res)
	}
}

func inUserinfo(raw, v string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.User != nil && strings.Contains(u.User.String(), v)
}

// userinfoName names a user:password pair by the variables it came from
// (the literal parts stay literal).
func userinfoName(res interpolation, user, pass string) string {
	return markVars(res, user+":"+pass)
}
