// Package cluster is what replicas of one deployment share besides state:
// a cluster key (confirmation tokens and session ids any replica can
// verify), session ids that name their owning replica, a registry of the
// stateful sessions, and each replica's record (catalog hash, start time) so
// that /readyz can say when replicas disagree about the catalog.
//
// It builds on internal/state (Redis when configured): never a cluster
// protocol of its own.
package cluster

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/agent-tools/agent-tools/internal/state"
)

// EnvKey is the environment variable holding the cluster key.
const EnvKey = "AGENT_TOOLS_CLUSTER_KEY"

// MinKeyLen is the shortest cluster key accepted, in bytes.
const MinKeyLen = 32

// Key is the cluster key. Replicas that must verify each other's tokens and
// session ids share it; each purpose gets its own key derived with HKDF.
type Key struct {
	secret []byte
	// Generated is true when no key was configured and this process made
	// one: nothing it signs can be verified by another replica.
	Generated bool
}

// LoadKey returns the configured key (server.clusterKey, usually
// "${AGENT_TOOLS_CLUSTER_KEY}"), else the environment's, else a random one.
func LoadKey(configured string, env func(string) (string, bool)) (Key, error) {
	if env == nil {
		env = os.LookupEnv
	}
	k := configured
	if k == "" {
		k, _ = env(EnvKey)
	}
	if k == "" {
		b := make([]byte, MinKeyLen)
		_, _ = rand.Read(b)
		return Key{secret: b, Generated: true}, nil
	}
	if len(k) < MinKeyLen {
		return Key{}, fmt.Errorf("cluster key too short: %d bytes, want at least %d (e.g. openssl rand -base64 48)", len(k), MinKeyLen)
	}
	return Key{secret: []byte(k)}, nil
}

// Derive returns a 32-byte key for one purpose ("confirm-tokens", "session-ids").
func (k Key) Derive(purpose string) []byte {
	if len(k.secret) == 0 {
		panic("cluster: Derive on a zero Key")
	}
	out, err := hkdf.Key(sha256.New, k.secret, nil, "agent-tools "+purpose+" v1", 32)
	if err != nil {
		panic(err) // only for lengths HKDF cannot produce
	}
	return out
}

// SignedPurpose is the derivation of the key that seals the values in the
// shared store that grant something: approval answers and entries,
// remembered decisions, pins, provider toggles and restarts (state.Signed).
const SignedPurpose = "shared-values"

// Signed returns st with the values that grant something sealed under
// the key derived for SignedPurpose, so that a replica applies only what a
// holder of the cluster key wrote; a value that does not verify is
// refused, logged to log, and treated as absent.
func (k Key) Signed(st state.Store, log *slog.Logger) *state.Signed {
	return state.NewSigned(st, k.Derive(SignedPurpose), log)
}

// Sessions mints and checks stateful session ids of the form
// "<replica>.<random>.<mac>": a load balancer can route on the replica part
// (or hash the whole header), and any replica can tell a real id owned by
// another replica from a forged or stale one.
type Sessions struct {
	Replica string
	key     []byte
}

// NewSessions returns a minter for replica (its id must be a DNS-label-like
// string: letters, digits, '-').
func NewSessions(replica string, k Key) (*Sessions, error) {
	if !ValidReplicaID(replica) {
		return nil, fmt.Errorf("invalid replica id %q: use 1 to 63 letters, digits and '-'", replica)
	}
	return &Sessions{Replica: replica, key: k.Derive("session-ids")}, nil
}

func (s *Sessions) mac(body string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:12])
}

// New returns a fresh session id owned by this replica.
func (s *Sessions) New() string {
	body := s.Replica + "." + rand.Text()
	return body + "." + s.mac(body)
}

// ErrForeign is returned by Owner for an id this cluster did not mint.
var ErrForeign = errors.New("session id not minted by this cluster")

// Owner returns the replica that minted id, after checking its MAC.
func (s *Sessions) Owner(id string) (string, error) {
	i := strings.LastIndexByte(id, '.')
	if i < 0 || len(id) > 200 {
		return "", ErrForeign
	}
	body, sum := id[:i], id[i+1:]
	if !hmac.Equal([]byte(sum), []byte(s.mac(body))) {
		return "", ErrForeign
	}
	replica, _, ok := strings.Cut(body, ".")
	if !ok || !ValidReplicaID(replica) {
		return "", ErrForeign
	}
	return replica, nil
}

// ValidReplicaID accepts 1–63 ASCII letters, digits and '-'.
func ValidReplicaID(id string) bool {
	if id == "" || len(id) > 63 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ReplicaID picks this replica's id: AGENT_TOOLS_REPLICA_ID, else the host
// name (a Kubernetes pod name), sanitised, plus a short random suffix so that
// a restarted process never inherits its predecessor's sessions.
func ReplicaID(env func(string) (string, bool)) string {
	if env == nil {
		env = os.LookupEnv
	}
	if id, ok := env("AGENT_TOOLS_REPLICA_ID"); ok && ValidReplicaID(id) {
		return id
	}
	host, _ := os.Hostname()
	var b strings.Builder
	for _, c := range host {
		if c < 128 && ValidReplicaID(string(c)) {
			b.WriteRune(c)
		}
		if b.Len() >= 48 {
			break
		}
	}
	if b.Len() == 0 {
		b.WriteString("replica")
	}
	return b.String() + "-" + strings.ToLower(rand.Text()[:6])
}
