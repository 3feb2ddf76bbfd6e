package config

// StripMeta returns c without its source positions, for comparing a parsed
// config with one built in code.
func StripMeta(c *Config) *Config {
	x := *c
	x.meta = nil
	return &x
}
