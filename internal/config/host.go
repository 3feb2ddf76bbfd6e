package config

// The runtime's own providers, builtin (the code: section) and local (the
// local: section), are entries of registered kinds like any other: the
// app builds them through the same entry point as providers: entries
// (provider.Build), from the entries HostEntries makes of their sections.

// Kinds of the runtime's own providers, which are also their ids.
const (
	BuiltinKind = "builtin"
	LocalKind   = "local"
)

// Kind makes the code: section builtin's spec.
func (*Code) Kind() string { return BuiltinKind }

// Kind makes the local: section local's spec.
func (*Local) Kind() string { return LocalKind }

// HostEntries are the runtime's own providers as entries: builtin (its
// spec the code: section) unless builtins is false, and local when
// local.enabled (its header from the local: section).
func (c *Config) HostEntries(builtins bool) []Provider {
	var out []Provider
	if builtins {
		out = append(out, Provider{ID: BuiltinKind, Kind: BuiltinKind, Enabled: true, RequireConfirm: true, Spec: &c.Code})
	}
	if c.Local.Enabled {
		out = append(out, Provider{ID: LocalKind, Kind: LocalKind, Enabled: true, Description: c.Local.Description,
			RequireConfirm: c.Local.RequireConfirm, Timeout: c.Local.Timeout, Spec: &c.Local})
	}
	return out
}
