package config_test

import (
	"strings"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	c, err := parse(t, "cache:\n  - tools: [\"weather_*\"]\n    ttl: 5m\n  - tools: [docs_search]\n    ttl: 1h\n    perIdentity: false\nlimits: {cacheBytes: 8MiB}\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Cache) != 2 || c.Cache[0].TTL.Duration != 5*time.Minute || !c.Cache[0].IsPerIdentity() || c.Cache[1].IsPerIdentity() {
		t.Fatalf("cache = %+v", c.Cache)
	}
	if c.Limits.CacheBytesOrDefault() != 8<<20 {
		t.Fatalf("cacheBytes = %d", c.Limits.CacheBytes)
	}
	d, err := parse(t, "")
	if err != nil || d.Limits.CacheBytesOrDefault() != 64<<20 || d.Cache != nil {
		t.Fatalf("defaults: %+v %v", d.Limits, err)
	}
}

func TestCacheMalformed(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"cache: {tools: [a]}\n", "agent-tools.yaml:1:8: cache: want a list"},
		{"cache:\n  - ttl: 5m\n", "needs tools"},
		{"cache:\n  - tools: [\"weather_*\"]\n", "needs ttl"},
		{"cache:\n  - tools: [\"a[\"]\n    ttl: 5m\n", "not a valid glob"},
		{"cache:\n  - tools: [\"\"]\n    ttl: 5m\n", "is empty"},
		{"cache:\n  - tools: [a]\n    ttl: 0s\n", "above 0"},
		{"cache:\n  - tools: [a]\n    ttl: -1m\n", "ttl"},
		{"cache:\n  - tools: [a]\n    ttl: 25h\n", "at most 24h"},
		{"cache:\n  - tools: [a]\n    ttl: 5m\n    perIdentity: maybe\n", "perIdentity"},
		{"cache:\n  - tools: [a]\n    ttl: 5m\n    ttls: 5m\n", "ttls"},
		{"cache:\n  - null\n", "agent-tools.yaml:2:5: cache[0]: a cache entry needs tools"},
		{"limits: {cacheBytes: lots}\n", "size"},
		{"naming: lossless\ncache:\n  - tools: [\"Weather.*\"]\n    ttl: 5m\n", "can never match"},
		// The config says the tool changes state: refused at load.
		{"providers:\n  - id: weather\n    kind: mcp\n    command: x\n    overrides:\n      set_alert: {annotations: {readOnlyHint: false}}\ncache:\n  - tools: [\"weather_*\"]\n    ttl: 5m\n",
			"matches weather_set_alert, which providers[0].overrides.set_alert marks as changing state"},
		{"providers:\n  - id: weather\n    kind: mcp\n    command: x\n    overrides:\n      wipe: {annotations: {destructiveHint: true}}\ncache:\n  - tools: [weather_wipe]\n    ttl: 5m\n",
			"only read-only tools are cached"},
	} {
		_, err := parse(t, tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.src, err, tc.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), "agent-tools.yaml:") {
			t.Errorf("%q: error without a position: %v", tc.src, err)
		}
	}
}
