package config

import (
	"net/url"
	"strings"
)

// Secret is one value the config interpolated from the environment into a
// secret-bearing place. The runtime's redactor (internal/redact) replaces
// Value by Name wherever text leaves the process.
type Secret struct {
	// Name is what replaces the value: "${VAR}", or for URL userinfo built
	// from two variables "${USER}:${PASS}".
	Name  string
	Value string
}

// Secrets lists the values interpolated from ${VAR} into secret-bearing
// places, collected while the file was decoded (nil for configs built in
// code). Secret-bearing places are: provider env and headers values, args,
// server.http.tokens, any key whose name says token, secret, password, key,
// auth or credential, and the userinfo, path and query of URLs (a variable
// that only supplies a URL's scheme, host or port is not a secret). Values
// shorter than 6 characters are left out by the redactor, not here.
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

// noteSecrets is called by the decoder for every interpolated scalar: it
// keeps the variables' values when path is a secret-bearing place.
func (d *decoder) noteSecrets(path string, res interpolation) {
	if len(res.vars) == 0 {
		return
	}
	last := path
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		last = path[i+1:]
	}
	lk := strings.ToLower(strings.Trim(last, `]"`))
	isURL := strings.HasSuffix(lk, "url") || lk == "issuer" || lk == "resource"
	secret := strings.Contains(path, ".env.") || strings.Contains(path, ".headers.") ||
		strings.Contains(path, ".args[") || strings.Contains(path, ".tokens[") ||
		strings.Contains(path, ".env[") || strings.Contains(path, ".headers[")
	for _, w := range []string{"token", "secret", "password", "passwd", "key", "auth", "credential", "cookie"} {
		if strings.Contains(lk, w) {
			secret = true
		}
	}
	if !secret && !isURL {
		return
	}
	var origin string // scheme://host:port of a URL: not secret
	if isURL && !secret {
		if u, err := url.Parse(res.value); err == nil {
			origin = u.Scheme + "://" + u.Host
			if u.User != nil {
				if p, ok := u.User.Password(); ok && len(u.User.Username()) > 0 {
					// The HTTP client sends userinfo as Basic base64(user:pass):
					// register the pair so that its base64 form is known too.
					d.meta.secrets = append(d.meta.secrets, Secret{Name: userinfoName(res, u.User.Username(), p), Value: u.User.Username() + ":" + p})
				}
			}
		}
	}
	for i, name := range res.vars {
		v := res.vals[i]
		if v == "" || (origin != "" && strings.Contains(origin, v) && !inUserinfo(res.value, v)) {
			continue
		}
		d.meta.secrets = append(d.meta.secrets, Secret{Name: "${" + name + "}", Value: v})
	}
}

func inUserinfo(raw, v string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.User != nil && strings.Contains(u.User.String(), v)
}

// userinfoName names a user:password pair by the variables it came from
// (the literal parts stay literal).
func userinfoName(res interpolation, user, pass string) string {
	name := user + ":" + pass
	for i, v := range res.vars {
		if res.vals[i] != "" {
			name = strings.ReplaceAll(name, res.vals[i], "${"+v+"}")
		}
	}
	return name
}
