package config

import (
	"net/url"
)

// Redis is server.redis: where replicas keep shared state.
type Redis struct {
	// URL is redis://[user:password@]host:port/db (rediss:// for TLS),
	// usually "${REDIS_URL}". A secret when it holds a password.
	URL string `json:"url,omitempty" yaml:"url,omitempty"`
}

// validateCluster checks server.redis and server.clusterKey.
func (v *Validator) validateCluster(s Server) {
	if u := s.Redis.URL; u != "" && !v.bad("server.redis.url") {
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "redis" && pu.Scheme != "rediss") || pu.Host == "" {
			v.errf("server.redis.url", "invalid Redis URL%s: want redis://[user:password@]host:port/db or rediss://…", v.via("server.redis.url"))
		}
	}
	if k := s.ClusterKey; k != "" && len(k) < 32 && !v.bad("server.clusterKey") {
		v.errf("server.clusterKey", "cluster key too short: %d bytes%s, want at least 32 (e.g. openssl rand -base64 48)", len(k), v.via("server.clusterKey"))
	}
}
