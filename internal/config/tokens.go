package config

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// server.http.tokens: each entry is a token ("${AGENT_TOOLS_TOKEN}") or a
// named one ({name: ci, token: "${CI_TOKEN}"}). The name becomes the
// caller's identity ("token:ci"), which policy.rules match, the audit
// records and the rate limit keys on; the token stays a secret (registered
// with the redactor like any value under tokens:).

// namedToken is the shape of a named entry; its tags are the entry's keys.
type namedToken struct {
	Name  string `yaml:"name"`
	Token string `yaml:"token"`
	// Use says where the token is accepted: "mcp" (the default: /mcp and
	// the console, as a bearer or at its login form) or "console": a
	// person's login, accepted only at the console's login form, whose
	// session may give a person's approval. A token an agent holds is an
	// MCP credential, so its console session never approves (#44 item 3).
	Use string `yaml:"use"`
}

// Token uses (namedToken.Use).
const (
	TokenUseMCP     = "mcp"
	TokenUseConsole = "console"
)

var tokenNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// TokenIdentity is the identity of the i-th static token: "token:<name>",
// or for an unnamed one "token:" and 8 hex digits of its SHA-256 (never
// the token itself).
func TokenIdentity(token, name string) string {
	if name != "" {
		return "token:" + name
	}
	sum := sha256.Sum256([]byte(token))
	return "token:" + hex.EncodeToString(sum[:4])
}

// tokens decodes server.http.tokens; names is nil when no entry is named.
func (d *Decoder) tokens(n *yaml.Node, path string) (tokens, names, uses []string) {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return nil, nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errAt(n, path, "want a list of tokens, got %s", describe(n))
		return nil, nil, nil
	}
	named, used := false, false
	for i, e := range n.Content {
		ip := index(path, i)
		if e = d.resolve(e, ip); e == nil {
			continue
		}
		d.meta.val[ip] = pos(e)
		var tok, name, use string
		if e.Kind == yaml.MappingNode {
			sawToken := false
			d.mapping(e, ip, Keys(namedToken{}), func(key string, _, v *yaml.Node, kp string) {
				s, ok := d.str(v, kp, true)
				if key == "use" {
					switch {
					case !ok:
					case s == TokenUseMCP:
					case s == TokenUseConsole:
						use, used = s, true
					default:
						d.errAt(v, kp, "token use %q: want %q (the default: an agent's token, for /mcp) or %q (a person's console login)", clip(s), TokenUseMCP, TokenUseConsole)
					}
					return
				}
				if key == "token" {
					sawToken = true
					if ok {
						tok = s
					} else {
						d.meta.bad[ip] = true
					}
					return
				}
				switch {
				case !ok:
				case len(d.meta.vars[kp]) > 0:
					// A name is no secret (logs and audit show it): one
					// from the environment would be registered as one.
					d.errAt(v, kp, "write a token's name literally, not from the environment")
				case !tokenNameRE.MatchString(s):
					d.errAt(v, kp, "token name %q: want letters, digits, '.', '_', '@' and '-' (at most 64, starting with a letter or digit)", clip(s))
				default:
					name, named = s, true
				}
			})
			if !sawToken {
				d.errAt(e, ip, `missing required key "token" (an entry is a token, or {name: <name>, token: <token>})`)
			}
		} else if s, ok := d.str(e, ip, true); ok {
			tok = s
		} else {
			d.meta.bad[ip] = true
		}
		tokens, names, uses = append(tokens, tok), append(names, name), append(uses, use) // indexes stay aligned with the file
	}
	if !named {
		names = nil
	}
	if !used {
		uses = nil
	}
	return tokens, names, uses
}

// tokens checks that no token is empty and that names are unique and never
// spell an unnamed token's digest identity (two callers would share one).
func (v *Validator) tokens(h HTTP) {
	for i, t := range h.Tokens {
		tp := index("server.http.tokens", i)
		if v.bad(tp) {
			continue
		}
		vp := tp // the value's path: the entry, or its token key in the mapping form
		if v.c.meta != nil {
			if _, isMap := v.c.meta.val[joinKey(tp, "token")]; isMap {
				vp = joinKey(tp, "token")
			}
		}
		if t == "" {
			if !v.bad(vp) {
				v.errf(vp, "empty token%s", v.via(vp))
			}
			continue
		}
		name := tokenName(h, i)
		if np := joinKey(tp, "name"); name != "" && !v.bad(np) {
			for j, u := range h.Tokens {
				if j == i || u == "" || TokenIdentity(u, tokenName(h, j)) != "token:"+name {
					continue
				}
				if other := tokenName(h, j); other == "" {
					v.errf(np, "token name %q is the identity of the unnamed token %s: choose another name", name, index("server.http.tokens", j))
				} else if j < i {
					v.errf(np, "token name %q is already used by %s: names must be unique", name, index("server.http.tokens", j))
				}
				break
			}
		}
	}
}

func tokenName(h HTTP, i int) string {
	if i < len(h.TokenNames) {
		return h.TokenNames[i]
	}
	return ""
}
