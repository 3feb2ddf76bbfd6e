package config

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/text"
)

// SecretsConfig is the secrets: section: how long resolved references are
// reused, and the commands ${cmd:NAME} runs.
//
//	secrets:
//	  cacheFor: 5m                # 0 resolves at every use
//	  commands:
//	    vault-gh: [vault, kv, get, -field=token, secret/gh]
type SecretsConfig struct {
	CacheFor Duration            `json:"cacheFor" yaml:"cacheFor"`
	Commands map[string][]string `json:"commands,omitempty" yaml:"commands,omitempty"`
}

// RefUse is one secret-store reference in the file: where it is written
// and what it names.
type RefUse struct {
	Path string
	Pos  Pos
	Ref  secrets.Ref
}

// SecretRefs lists the file's secret-store references in file order (nil
// for configs built in code).
func (c *Config) SecretRefs() []RefUse {
	if c == nil || c.meta == nil {
		return nil
	}
	return c.meta.refs
}

func refNames(refs []secrets.Ref) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.Store + ":" + r.Key // shown as ${store:key} by from/show
	}
	return out
}

// ConfigureResolver hands the secrets: section to r (the runtime's
// secrets.Default): cache time, commands, and the directory relative paths
// resolve against.
func (c *Config) ConfigureResolver(r *secrets.Resolver) {
	r.Configure(c.SecretStores.CacheFor.Duration, c.SecretStores.Commands, c.Dir)
}

// validateSecrets checks secrets: and that every ${cmd:NAME} names a
// declared command.
func (v *Validator) validateSecrets() {
	s := v.c.SecretStores
	if s.CacheFor.Duration < 0 {
		v.errf("secrets.cacheFor", "must not be negative (0 resolves at every use)")
	}
	names := make([]string, 0, len(s.Commands))
	for name, argv := range s.Commands {
		names = append(names, name)
		p := "secrets.commands." + name
		if v.bad(p) {
			continue
		}
		if _, err := secrets.Parse("cmd:" + name); err != nil {
			v.errf(p, "%v", err)
		}
		if len(argv) == 0 || argv[0] == "" {
			v.errf(p, "want the command as a list: [program, arg, ...] (run without a shell)")
		}
	}
	for _, u := range v.c.SecretRefs() {
		if strings.HasPrefix(u.Path, "secrets.") {
			v.errf(u.Path, "a secrets command cannot itself use a secret reference (%s)", u.Ref)
			continue
		}
		if u.Ref.Store != "cmd" || slices.Contains(names, u.Ref.Key) {
			continue
		}
		msg := fmt.Sprintf("%s names no command under secrets.commands", u.Ref)
		if sug := text.Suggest(u.Ref.Key, names); sug != "" {
			msg += fmt.Sprintf("; did you mean %q?", sug)
		} else {
			msg += fmt.Sprintf(" (declare it: secrets: {commands: {%s: [program, arg, ...]}})", u.Ref.Key)
		}
		v.errf(u.Path, "%s", msg)
	}
}

// ResolveSecrets resolves, through r, the secret references outside
// providers: (server tokens, index embeddings, ...), in place, and reports
// a reference that does not resolve as a config error at its position.
// Providers' references are resolved when each provider is built
// (ResolveProvider), so that one store failing skips only its provider.
func (c *Config) ResolveSecrets(ctx context.Context, r *secrets.Resolver) error {
	var errs []Error
	done := map[secrets.Ref]bool{}
	for _, u := range c.SecretRefs() {
		if strings.HasPrefix(u.Path, "providers[") || done[u.Ref] {
			continue
		}
		done[u.Ref] = true
		if _, err := r.Resolve(ctx, u.Ref); err != nil {
			errs = append(errs, Error{File: c.meta.file, Line: u.Pos.Line, Col: u.Pos.Col, Path: u.Path, Msg: err.Error()})
		}
	}
	if len(errs) > 0 {
		return newErrors(errs)
	}
	if len(done) == 0 {
		return nil
	}
	rv := reflect.ValueOf(c).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Type().Field(i)
		if !f.IsExported() || f.Name == "Providers" || f.Name == "SecretStores" {
			continue
		}
		nv, err := expandValue(ctx, r, rv.Field(i), 0)
		if err != nil {
			return err
		}
		rv.Field(i).Set(nv)
	}
	return nil
}

// ResolveProvider returns a copy of pc with every secret reference in it
// (its kind's keys included) replaced by the value, or the first store's
// error: the provider is then skipped with that reason.
func ResolveProvider(ctx context.Context, pc Provider, r *secrets.Resolver) (Provider, error) {
	nv, err := expandValue(ctx, r, reflect.ValueOf(pc), 0)
	if err != nil {
		return pc, err
	}
	return nv.Interface().(Provider), nil
}

// expandValue copies v with references in every string replaced.
func expandValue(ctx context.Context, r *secrets.Resolver, v reflect.Value, depth int) (reflect.Value, error) {
	if depth > 64 {
		return v, nil
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if !strings.Contains(s, "${") {
			return v, nil
		}
		out, err := r.Expand(ctx, s)
		if err != nil {
			return v, err
		}
		nv := reflect.New(v.Type()).Elem()
		nv.SetString(out)
		return nv, nil
	case reflect.Pointer:
		if v.IsNil() {
			return v, nil
		}
		e, err := expandValue(ctx, r, v.Elem(), depth+1)
		if err != nil {
			return v, err
		}
		np := reflect.New(v.Type().Elem())
		np.Elem().Set(e)
		return np, nil
	case reflect.Interface:
		if v.IsNil() {
			return v, nil
		}
		e, err := expandValue(ctx, r, v.Elem(), depth+1)
		if err != nil {
			return v, err
		}
		ni := reflect.New(v.Type()).Elem()
		ni.Set(e)
		return ni, nil
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return v, nil
		}
		ns := reflect.New(v.Type()).Elem()
		ns.Set(v) // unexported fields as they are
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			e, err := expandValue(ctx, r, v.Field(i), depth+1)
			if err != nil {
				return v, err
			}
			ns.Field(i).Set(e)
		}
		return ns, nil
	case reflect.Slice:
		if v.IsNil() {
			return v, nil
		}
		ns := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			e, err := expandValue(ctx, r, v.Index(i), depth+1)
			if err != nil {
				return v, err
			}
			ns.Index(i).Set(e)
		}
		return ns, nil
	case reflect.Map:
		if v.IsNil() {
			return v, nil
		}
		nm := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			e, err := expandValue(ctx, r, it.Value(), depth+1)
			if err != nil {
				return v, err
			}
			nm.SetMapIndex(it.Key(), e)
		}
		return nm, nil
	}
	return v, nil
}

// IsZero reports the default section (omitted from printed configs).
func (s SecretsConfig) IsZero() bool {
	return s.CacheFor.Duration == secrets.DefaultCacheFor && len(s.Commands) == 0
}
