package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"

	"go.yaml.in/yaml/v3"
)

// RegistryEntry is what `agent-tools registry add` wrote a provider entry
// from, read from the comment it writes above the entry:
//
//	# registry: NAME@VERSION (TYPE) from URL
//
// A provider with it and `pin: quarantine` is held, not built or started,
// until a person approves this name, version and Digest (docs/registry.md).
type RegistryEntry struct {
	Name, Version string
	// Source is the package type (npm, pypi, oci, nuget, mcpb) or remote;
	// From the registry's URL ("" when the comment does not say).
	Source, From string
	// Digest is the SHA-256 (hex) of what the entry runs as the file
	// writes it: every key but the ones that cannot change what runs
	// (digestSkips), its ${VAR} references as written, not their values,
	// comments left out. Any change to the command, its args or env, the
	// URL or headers gives another digest, which needs a new approval.
	Digest string
}

// RegistryMarker is the comment registry add writes above an entry (the
// registry commands read it back too).
var RegistryMarker = regexp.MustCompile(`(?m)^#?[ \t]*registry: (\S+)@(\S+) \(([a-z-]+)\)(?: from (\S+))?`)

// ParseRegistryMarker reads the marker comment; nil when there is none.
func ParseRegistryMarker(comment string) *RegistryEntry {
	m := RegistryMarker.FindStringSubmatch(comment)
	if m == nil {
		return nil
	}
	return &RegistryEntry{Name: m[1], Version: m[2], Source: m[3], From: m[4]}
}

// digestSkips are the provider keys that cannot change what is run or
// reached: the rest (kind, command, args, env, cwd, url, headers, auth,
// skills, every kind's own keys) is in RegistryEntry.Digest.
var digestSkips = []string{"id", "description", "discoverHint", "enabled", "readonly", "requireConfirm", "timeout", "rename", "overrides", "pin"}

// entryDigest is RegistryEntry.Digest of an entry's keys and values.
func entryDigest(pairs []rawPair) string {
	budget := visitBudget
	m := map[string]any{}
	for _, p := range pairs {
		if !slices.Contains(digestSkips, p.key) {
			m[p.key] = canonNode(p.v, &budget)
		}
	}
	data, _ := json.Marshal(m) // strings, lists and maps only
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

type rawPair struct {
	key string
	v   *yaml.Node
}

// canonNode is a node's value without its comments, style or position.
func canonNode(n *yaml.Node, budget *int) any {
	*budget--
	if n == nil || *budget < 0 {
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		return canonNode(n.Alias, budget)
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			return canonNode(n.Content[0], budget)
		}
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, canonNode(c, budget))
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, _ := canonNode(n.Content[i], budget).(string)
			out[k] = canonNode(n.Content[i+1], budget)
		}
		return out
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil
		}
		return n.Value
	}
	return nil
}
