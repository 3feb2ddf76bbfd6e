package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
)

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown http key", "server:\n  http:\n    adr: x\n", []string{
			`agent-tools.yaml:3:5: server.http: unknown key "adr"; did you mean "addr"?`}},
		{"unknown oidc key", "server:\n  http:\n    oidc:\n      issuer: https://id.example.com\n      audience: a\n      aud: x\n", []string{
			`agent-tools.yaml:6:7: server.http.oidc: unknown key "aud" (want issuer, audience or clockSkew)`}},
		{"oidc issuer without audience", "server:\n  http:\n    oidc:\n      issuer: https://id.example.com\n", []string{
			`agent-tools.yaml:4:7: server.http.oidc: missing required key "audience" (the "aud" value tokens for this server carry)`}},
		{"oidc audience without issuer", "server:\n  http:\n    oidc: {audience: a}\n", []string{
			`agent-tools.yaml:3:11: server.http.oidc: missing required key "issuer" (the OpenID Connect issuer URL)`}},
		{"oidc http issuer", "server:\n  http:\n    oidc: {issuer: 'http://id.example.com', audience: a}\n", []string{
			`agent-tools.yaml:3:20: server.http.oidc.issuer: invalid issuer "http://id.example.com": want an https:// URL (http:// only for a loopback host), without query or fragment`}},
		{"oidc skew", "server:\n  http:\n    oidc: {issuer: 'https://id.example.com', audience: a, clockSkew: 1h}\n", []string{
			`agent-tools.yaml:3:70: server.http.oidc.clockSkew: at most 5m, got 1h0m0s`}},
		{"bad origin", "server:\n  http:\n    allowedOrigins: [\"https://ok.example.com\", \"evil.com\", \"https://x.example.com/path\"]\n", []string{
			`agent-tools.yaml:3:48: server.http.allowedOrigins[1]: invalid origin "evil.com": want scheme://host[:port] such as https://console.example.com, or "*"`,
			`agent-tools.yaml:3:60: server.http.allowedOrigins[2]: invalid origin "https://x.example.com/path": want scheme://host[:port] such as https://console.example.com, or "*"`}},
		{"bad host", "server:\n  http:\n    allowedHosts: [\"http://x\"]\n", []string{
			`agent-tools.yaml:3:20: server.http.allowedHosts[0]: invalid host "http://x": want a host name or host:port as clients send it in the Host header, or "*"`}},
		{"body limit", "server:\n  http:\n    bodyLimit: -1\n", []string{
			`agent-tools.yaml:3:16: server.http.bodyLimit: want a size in bytes from 1 to 1073741824 (0 = the default, 4 MiB), got -1`}},
		{"body limit type", "server:\n  http:\n    bodyLimit: 4MiB\n", []string{
			`agent-tools.yaml:3:16: server.http.bodyLimit: want an integer, got "4MiB"`}},
		{"rate limit", "server:\n  http:\n    rateLimit: {perSecond: -5, burst: x}\n", []string{
			`agent-tools.yaml:3:28: server.http.rateLimit.perSecond: must not be negative, got -5`,
			`agent-tools.yaml:3:39: server.http.rateLimit.burst: want an integer, got "x"`}},
		{"durations", "server:\n  http:\n    sessionTimeout: 10\n    shutdownGrace: -1s\n", []string{
			`agent-tools.yaml:3:21: server.http.sessionTimeout: want a duration such as "30s" or "1m30s", got number 10 (add a unit: 10s)`,
			`agent-tools.yaml:4:20: server.http.shutdownGrace: must not be negative, got -1s`}},
		{"resource", "server:\n  http:\n    resource: /mcp\n", []string{
			`agent-tools.yaml:3:15: server.http.resource: invalid URL "/mcp": want this server's public http(s) URL of /mcp`}},
		{"stateless", "server:\n  http:\n    stateless: yes please\n", []string{
			`agent-tools.yaml:3:16: server.http.stateless: want true or false, got "yes please"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.src)
			got := errorsOf(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestHTTPValid(t *testing.T) {
	c, err := parse(t, `
server:
  http:
    addr: 0.0.0.0:9000
    tokens: ["${AGENT_TOOLS_TOKEN}"]
    oidc:
      issuer: http://127.0.0.1:5556/dex
      audience: agent-tools
      clockSkew: 10s
    resource: https://tools.example.com/mcp
    allowedOrigins: ["https://console.example.com", "*"]
    allowedHosts: [tools.example.com, "tools.example.com:443"]
    bodyLimit: 1048576
    bodyTimeout: 20s
    rateLimit: { perSecond: 5, burst: 10 }
    sessionTimeout: 30m
    shutdownGrace: 5s
    stateless: true
    jsonResponse: true
`)
	if err != nil {
		t.Fatal(err)
	}
	want := config.HTTP{
		Addr: "0.0.0.0:9000", Tokens: []string{"http-secret-value"},
		OIDC:     config.OIDC{Issuer: "http://127.0.0.1:5556/dex", Audience: "agent-tools", ClockSkew: config.Duration{10 * time.Second}},
		Resource: "https://tools.example.com/mcp", AllowedOrigins: []string{"https://console.example.com", "*"},
		AllowedHosts: []string{"tools.example.com", "tools.example.com:443"}, BodyLimit: 1 << 20, BodyTimeout: config.Duration{20 * time.Second},
		RateLimit: config.RateLimit{PerSecond: 5, Burst: 10}, SessionTimeout: config.Duration{30 * time.Minute},
		ShutdownGrace: config.Duration{5 * time.Second}, Stateless: true, JSONResponse: true,
	}
	if !reflect.DeepEqual(c.Server.HTTP, want) {
		t.Errorf("got %+v\nwant %+v", c.Server.HTTP, want)
	}
	if !c.Server.HTTP.AuthConfigured() {
		t.Error("AuthConfigured = false")
	}
	if r := c.Redacted(); r.Server.HTTP.Tokens[0] != "***" || r.Server.HTTP.OIDC.Issuer == "" {
		t.Errorf("redacted: %+v", r.Server.HTTP)
	}
	d, err := parse(t, "server:\n  http:\n    oidc: {issuer: 'https://id.example.com', audience: a}\n")
	if err != nil || !d.Server.HTTP.AuthConfigured() || len(d.Server.HTTP.Tokens) != 0 {
		t.Errorf("oidc only: %v %+v", err, d)
	}
	if config.Default(t.TempDir()).Server.HTTP.AuthConfigured() {
		t.Error("zero-config has auth")
	}
}
