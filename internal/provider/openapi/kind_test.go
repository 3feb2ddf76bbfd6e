package openapi_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider/openapi"
	"github.com/agent-tools/agent-tools/internal/tests/configtest"
)

// The example, verbatim in shape.
const openapiExample = `providers:
  - id: gh
    kind: openapi
    spec: ./api/github.json
    baseURL: https://api.github.com
    include: ["repos/*", "issues/*"]
    exclude: ["repos/delete"]
    readonly: ["search/*"]
    auth:
      bearer: "${EV_KEY}"
    timeout: 30s
  - id: pb
    kind: openapi
    spec: https://example.com/openapi.yaml
    auth:
      login: { path: /api/collections/users/auth-with-password, body: { identity: "${EV_KEY}", password: "${REMOTE_TOKEN}" },
               token: /token, header: Authorization, prefix: "" }
  - id: tasks
    kind: openapi
    spec: tasks.yaml
    auth:
      header: { X-Api-Key: "${EV_KEY}" }
  - id: basic
    kind: openapi
    spec: b.yaml
    auth:
      basic: { user: admin, password: "${REMOTE_TOKEN}" }
`

func TestOpenAPIDecode(t *testing.T) {
	c, err := config.Parse("/p/agent-tools.yaml", []byte(openapiExample), configtest.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	gh := c.Providers[0].Spec.(*openapi.Spec)
	if gh.Spec != "/p/api/github.json" || gh.BaseURL != "https://api.github.com" ||
		!reflect.DeepEqual(gh.Include, []string{"repos/*", "issues/*"}) || !reflect.DeepEqual(gh.Exclude, []string{"repos/delete"}) ||
		gh.Auth == nil || gh.Auth.Bearer != "ev-secret-value" {
		t.Errorf("gh = %+v auth %+v", gh, gh.Auth)
	}
	if p := c.Providers[0]; !reflect.DeepEqual(p.ReadOnly, []string{"search/*"}) || p.Timeout.Duration.String() != "30s" {
		t.Errorf("common keys = %+v", p)
	}
	pb := c.Providers[1].Spec.(*openapi.Spec)
	l := pb.Auth.Login
	if pb.Spec != "https://example.com/openapi.yaml" || l == nil || l.Path != "/api/collections/users/auth-with-password" ||
		l.Body["identity"] != "ev-secret-value" || l.Body["password"] != "remote-secret-value" ||
		l.Token != "/token" || l.Header != "Authorization" || l.TokenPrefix() != "" {
		t.Errorf("pb = %+v login %+v", pb, l)
	}
	if h := c.Providers[2].Spec.(*openapi.Spec).Auth.Header; h["X-Api-Key"] != "ev-secret-value" {
		t.Errorf("header auth = %v", h)
	}
	if b := c.Providers[3].Spec.(*openapi.Spec).Auth.Basic; b == nil || b.User != "admin" || b.Password != "remote-secret-value" {
		t.Errorf("basic = %+v", b)
	}
}

func TestOpenAPILoginDefaults(t *testing.T) {
	c, err := configtest.Parse(t, "providers:\n  - id: pb\n    kind: openapi\n    spec: x.yaml\n    auth:\n      login: { path: /login }\n")
	if err != nil {
		t.Fatal(err)
	}
	l := c.Providers[0].Spec.(*openapi.Spec).Auth.Login
	if l.Token != "/token" || l.Header != "Authorization" || l.TokenPrefix() != "Bearer " {
		t.Errorf("defaults = %+v prefix %q", l, l.TokenPrefix())
	}
}

func TestOpenAPIErrors(t *testing.T) {
	const head = "providers:\n  - id: gh\n    kind: openapi\n    spec: x.yaml\n"
	tests := []struct {
		name, src string
		want      []string
	}{
		{"bad include glob", head + "    include: [\"repos/[\"]\n", []string{
			`agent-tools.yaml:5:15: providers[0].include[0]: pattern "repos/[" is not a valid glob (syntax: * ? [a-z] \x)`}},
		{"empty exclude", head + "    exclude: [\"\"]\n", []string{
			`agent-tools.yaml:5:15: providers[0].exclude[0]: empty pattern`}},
		{"empty readonly", head + "    readonly: [\"\"]\n", []string{
			`agent-tools.yaml:5:16: providers[0].readonly[0]: empty tool name`}},
		{"bad readonly glob", head + "    readonly: [\"[\"]\n", []string{
			`agent-tools.yaml:5:16: providers[0].readonly[0]: pattern "[" is not a valid glob (syntax: * ? [a-z] \x)`}},
		{"include not a list", head + "    include: repos\n", []string{
			`agent-tools.yaml:5:14: providers[0].include: want a list, got a string`}},
		{"auth empty", head + "    auth: {}\n", []string{
			`agent-tools.yaml:5:11: providers[0].auth: auth needs one of bearer, header, basic or login`}},
		{"auth two kinds", head + "    auth:\n      bearer: x\n      basic: { user: u, password: p }\n", []string{
			`agent-tools.yaml:7:7: providers[0].auth.basic: auth takes one of bearer, header, basic or login, not both "bearer" and "basic"`}},
		{"auth unknown key", head + "    auth:\n      token: x\n", []string{
			`agent-tools.yaml:6:7: providers[0].auth: unknown key "token" (want bearer, header, basic or login)`}},
		{"basic without user", head + "    auth:\n      basic: { password: p }\n", []string{
			`agent-tools.yaml:6:14: providers[0].auth.basic: auth.basic needs "user" (and "password")`}},
		{"login without path", head + "    auth:\n      login: { body: { a: b } }\n", []string{
			`agent-tools.yaml:6:14: providers[0].auth.login: auth.login needs "path" (the login operation's path under baseURL, e.g. /api/collections/users/auth-with-password)`}},
		{"login absolute url", head + "    auth:\n      login: { path: \"https://evil.example/login\" }\n", []string{
			`agent-tools.yaml:6:22: providers[0].auth.login.path: login path "https://evil.example/login" must be a path under baseURL starting with /`}},
		{"login bad pointer", head + "    auth:\n      login: { path: /l, token: token }\n", []string{
			`agent-tools.yaml:6:33: providers[0].auth.login.token: token "token" must be a JSON pointer into the login answer, such as /token`}},
		{"login bad header", head + "    auth:\n      login: { path: /l, header: \"a b\" }\n", []string{
			`agent-tools.yaml:6:34: providers[0].auth.login.header: invalid header name "a b"`}},
		// A type error in the body does not stop the rest of the block being checked.
		{"login bad body and the rest", head + "    auth:\n      login: { path: nope, body: [1], token: bad }\n", []string{
			`agent-tools.yaml:6:22: providers[0].auth.login.path: login path "nope" must be a path under baseURL starting with /`,
			`agent-tools.yaml:6:34: providers[0].auth.login.body: want a mapping, got a list`,
			`agent-tools.yaml:6:46: providers[0].auth.login.token: token "bad" must be a JSON pointer into the login answer, such as /token`}},
		{"login bad body value and a missing path", head + "    auth:\n      login: { body: {a: [1]}, header: \"a b\" }\n", []string{
			`agent-tools.yaml:6:14: providers[0].auth.login: auth.login needs "path" (the login operation's path under baseURL, e.g. /api/collections/users/auth-with-password)`,
			`agent-tools.yaml:6:26: providers[0].auth.login.body.a: want a string, got a list`,
			`agent-tools.yaml:6:40: providers[0].auth.login.header: invalid header name "a b"`}},
		{"unknown auth key only", head + "    auth:\n      bearr: x\n", []string{
			`agent-tools.yaml:6:7: providers[0].auth: unknown key "bearr"; did you mean "bearer"?`}},
		{"auth header bad name", head + "    auth:\n      header: { \"a b\": v }\n", []string{
			`agent-tools.yaml:6:17: providers[0].auth.header["a b"]: invalid header name "a b"`}},
		{"auth header empty", head + "    auth:\n      header: {}\n", []string{
			`agent-tools.yaml:6:15: providers[0].auth.header: auth.header needs at least one header: value`}},
		{"spec url bad scheme", "providers:\n  - id: gh\n    kind: openapi\n    spec: ftp://x/y.json\n", []string{
			`agent-tools.yaml:4:11: providers[0].spec: invalid URL "ftp://x/y.json": want http:// or https:// with a host`}},
		{"secret in a bad value is not printed", head + "    auth:\n      login: { path: \"${EV_KEY}\" }\n", []string{
			`agent-tools.yaml:6:22: providers[0].auth.login.path: login path the value of ${EV_KEY} must be a path under baseURL starting with /`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := configtest.Parse(t, tt.src)
			if got := configtest.ErrorsOf(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestOpenAPIRedacted(t *testing.T) {
	c, err := config.Parse("/p/agent-tools.yaml", []byte(openapiExample+"    headers: { X-Extra: \"${EV_KEY}\" }\n"), configtest.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, secret := range []string{"ev-secret-value", "remote-secret-value", `"admin"`} {
		if strings.Contains(out, secret) {
			t.Errorf("redacted config holds %s: %s", secret, out)
		}
	}
	for _, kept := range []string{`"bearer":"***"`, `"X-Api-Key":"***"`, `"password":"***"`, `"identity":"***"`, `"path":"/api/collections/users/auth-with-password"`, `"include":["repos/*","issues/*"]`} {
		if !strings.Contains(out, kept) {
			t.Errorf("redacted config lacks %s: %s", kept, out)
		}
	}
	// The original is untouched.
	if c.Providers[0].Spec.(*openapi.Spec).Auth.Bearer != "ev-secret-value" {
		t.Error("Redacted changed the original")
	}
}
