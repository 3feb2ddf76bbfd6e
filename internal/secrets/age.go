package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"filippo.io/age"
	"go.yaml.in/yaml/v3"
)

// AgeIdentityEnv names the file holding the age identity (AGE-SECRET-KEY-…
// lines, as age-keygen writes them).
const AgeIdentityEnv = "AGE_IDENTITY_FILE"

// AgeKeyringService and AgeKeyringAccount are where the identity is read
// from the OS keyring when AGE_IDENTITY_FILE is not set:
// agent-tools secrets set agent-tools/age-identity < key.txt
const (
	AgeKeyringService = "agent-tools"
	AgeKeyringAccount = "age-identity"
)

func (r *Resolver) ageIdentities() ([]age.Identity, string, error) {
	if p, ok := r.lookupEnv(AgeIdentityEnv); ok && p != "" {
		p = r.path(p)
		f, err := os.Open(p)
		if err != nil {
			return nil, "", fmt.Errorf("age store: cannot read the identity file %s (%s): %v", p, AgeIdentityEnv, errText(err))
		}
		defer f.Close()
		ids, err := age.ParseIdentities(f)
		if err != nil {
			return nil, "", fmt.Errorf("age store: the identity file %s (%s) holds no age identity: %v", p, AgeIdentityEnv, err)
		}
		return ids, p, nil
	}
	v, err := OS().Get(AgeKeyringService, AgeKeyringAccount)
	if err != nil {
		return nil, "", fmt.Errorf("age store: no identity: set %s to an age key file, or store one in the keyring with: agent-tools secrets set %s/%s < key.txt (%v)",
			AgeIdentityEnv, AgeKeyringService, AgeKeyringAccount, err)
	}
	ids, err := age.ParseIdentities(strings.NewReader(v))
	if err != nil {
		return nil, "", fmt.Errorf("age store: the keyring item %s/%s holds no age identity: %v", AgeKeyringService, AgeKeyringAccount, err)
	}
	return ids, "keyring " + AgeKeyringService + "/" + AgeKeyringAccount, nil
}

func resolveAge(_ context.Context, r *Resolver, key string) (string, error) {
	file, field, _ := strings.Cut(key, "#")
	path := r.path(file)
	ids, from, err := r.ageIdentities()
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("age store: cannot read %s: %v", path, errText(err))
	}
	defer f.Close()
	dec, err := age.Decrypt(f, ids...)
	if err != nil {
		return "", fmt.Errorf("age store: cannot decrypt %s with the identity from %s: %v", path, from, err)
	}
	plain, err := io.ReadAll(io.LimitReader(dec, 16<<20))
	if err != nil {
		return "", fmt.Errorf("age store: decrypting %s: %v", path, err)
	}
	doc, err := parseDoc(path, plain)
	if err != nil {
		return "", fmt.Errorf("age store: %s decrypts but is not YAML, JSON or KEY=VALUE lines: %v", path, err)
	}
	v, err := lookupField(doc, field)
	if err != nil {
		return "", fmt.Errorf("age store: %s has no %s: %v", path, field, err)
	}
	return v, nil
}

// parseDoc reads a decrypted file by its name (without .age): .json,
// .yaml/.yml, .env; otherwise JSON when it starts with {, then YAML, then
// KEY=VALUE lines.
func parseDoc(path string, b []byte) (any, error) {
	name := strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".age")
	ext := filepath.Ext(name)
	if ext == ".env" || strings.HasPrefix(name, ".env") || strings.HasSuffix(name, ".env.age") {
		return parseEnv(b)
	}
	if ext == ".json" || bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		return v, nil
	}
	var v any
	yerr := yaml.Unmarshal(b, &v)
	if _, isMap := v.(map[string]any); yerr == nil && isMap {
		return v, nil
	}
	if ext == ".yaml" || ext == ".yml" {
		if yerr == nil {
			yerr = errors.New("the top level is not a mapping")
		}
		return nil, yerr
	}
	return parseEnv(b)
}

func parseEnv(b []byte) (any, error) {
	m := map[string]any{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("line %d is not KEY=VALUE", i+1)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			if v[0] == '"' {
				if u, err := strconv.Unquote(v); err == nil {
					v = u
				} else {
					v = v[1 : len(v)-1]
				}
			} else {
				v = v[1 : len(v)-1]
			}
		}
		m[strings.TrimSpace(k)] = v
	}
	return m, nil
}

// lookupField finds KEY in doc: the whole key first (an env name or a
// key with dots), then a dotted path through mappings.
func lookupField(doc any, field string) (string, error) {
	if m, ok := doc.(map[string]any); ok {
		if v, ok := m[field]; ok {
			return scalar(v)
		}
	}
	cur := doc
	for _, part := range strings.Split(field, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%q is not inside a mapping", part)
		}
		v, ok := m[part]
		if !ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			return "", fmt.Errorf("no key %q (keys there: %s)", part, strings.Join(sortedClip(keys), ", "))
		}
		cur = v
	}
	return scalar(cur)
}

func scalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "", errors.New("the value is null")
	case map[string]any, []any:
		return "", errors.New("the value is a mapping or a list, not one secret")
	default:
		return fmt.Sprint(x), nil
	}
}
