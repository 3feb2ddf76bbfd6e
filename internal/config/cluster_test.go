package config_test

import (
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
)

func TestClusterSettings(t *testing.T) {
	key := strings.Repeat("k", 40)
	c, err := config.Parse("agent-tools.yaml", []byte("server:\n  redis: {url: \"redis://app:${PW}@127.0.0.1:6379/0\"}\n  clusterKey: \"${CK}\"\n"),
		func(k string) (string, bool) {
			return map[string]string{"PW": "redis-pass-value", "CK": key}[k], k == "PW" || k == "CK"
		})
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Redis.URL != "redis://app:redis-pass-value@127.0.0.1:6379/0" || c.Server.ClusterKey != key {
		t.Fatalf("server = %+v", c.Server)
	}
	r := c.Redacted()
	if r.Server.ClusterKey != "***" || strings.Contains(r.Server.Redis.URL, "redis-pass-value") || !strings.Contains(r.Server.Redis.URL, "127.0.0.1:6379") {
		t.Errorf("redacted = %+v", r.Server)
	}

	tests := []struct{ src, want string }{
		{"server:\n  redis: {url: \"http://x\"}\n", "agent-tools.yaml:2:16: server.redis.url: invalid Redis URL: want redis://"},
		{"server:\n  clusterKey: short-secret\n", "agent-tools.yaml:2:15: server.clusterKey: cluster key too short: 12 bytes, want at least 32"},
		{"server:\n  redis: {host: x}\n", `unknown key "host"`},
	}
	for _, tt := range tests {
		_, err := config.Parse("agent-tools.yaml", []byte(tt.src), func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.src, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "short-secret") {
			t.Errorf("the key leaked into %q", err)
		}
	}
}
