// Package decisions remembers confirmations a person made once: "always
// allow this tool" (persisted) and "always for this session" (in memory).
//
// A decision is kept for the scope it was given for, and applies in that
// scope only:
//
//   - the identity of the caller whose call the person approved
//     (pipeline.DecisionScope): a decision for token:alice never confirms
//     token:bob's call, even when one rule names them both. (The rule set
//     a decision came from would be a wider scope — every identity that
//     rule names — so the identity, the stricter of the two, is the key.)
//     Every process:<pid> identity (stdio, HTTP without authentication) is
//     the one local user, "process", whatever the process id;
//   - the tool's canonical name (never an original name, a suffix or an
//     alias) and the provider that owned it: a decision whose name now
//     belongs to another provider, or to no tool at all, is stale;
//   - the tool's definition digest: a changed definition asks again.
//
// A decision written by an older version (a version 1 file) was keyed by
// name only and would confirm every caller's call: it is kept for
// `agent-tools decisions list` (status legacy) and never applied.
//
// The store is one JSON file next to the config, written atomically (a
// temporary file in the same directory, fsync, rename). Why not bbolt: the
// data is a handful of names, a person may read or edit it, and bbolt holds
// an exclusive file lock for as long as the database is open, so
// `agent-tools decisions list` would block while `serve` runs. With a plain
// file, the server re-reads it when its modification time or size changes,
// so a revoke from the command line applies to a running server at once.
package decisions

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/state"
)

// FileName is the store's file, in the config's directory.
const FileName = "agent-tools.decisions.json"

// maxFile bounds what is read: a decisions file is small; a huge one is not ours.
const maxFile = 4 << 20

// Record is one remembered "always allow".
type Record struct {
	// Tool is the canonical name the person allowed.
	Tool string `json:"tool"`
	// Provider owned Tool when the person decided.
	Provider string `json:"provider"`
	// Identity is the caller the person allowed Tool for (ScopeIdentity
	// of its identity); "" for a decision of an older version, which is
	// never applied (Legacy).
	Identity string    `json:"identity,omitempty"`
	Time     time.Time `json:"time"`
	// Digest is the tool's definition digest when the person decided
	// (catalog.Definition.Digest): a tool whose upstream changed its
	// name, description, schemas or annotations since asks again (docs/pins.md).
	Digest string `json:"digest,omitempty"`
}

// fileVersion is the version written: 2 keys decisions by identity; a
// version 1 file (name only) is read, its decisions legacy.
const fileVersion = 2

type file struct {
	Version   int      `json:"version"`
	Decisions []Record `json:"decisions"`
}

// key is where a record lives in the store's map.
func (r Record) key() string { return r.Identity + "\x00" + r.Tool }

// ScopeIdentity is the identity a decision is kept under: id itself, but
// every process:<pid> (stdio, HTTP without authentication: the one local
// user, whatever the process) is "process", so that a decision outlives
// the process it was made in.
func ScopeIdentity(id string) string {
	if strings.HasPrefix(id, "process:") {
		return "process"
	}
	return id
}

// CorruptError says the file could not be read as a decisions file. The
// store then starts empty; the file is moved aside on the first write.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("decisions file %s is unreadable (%v); starting without remembered decisions (run `agent-tools decisions clear` to reset it)", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Store is safe for concurrent use. Path "" keeps decisions in memory only.
type Store struct {
	path string
	now  func() time.Time
	log  *slog.Logger

	mu      sync.Mutex
	always  map[string]Record
	session map[sessionKey]string // → provider + "\x00" + definition digest
	stamp   state.Stamp           // of the file as last read or written
	corrupt bool                  // the file on disk is not ours: move it aside before writing
	shared  *state.Signed         // "always" decisions live here instead of the file (see Share)
}

type sessionKey struct{ identity, session, tool string }

var _ pipeline.Decisions = (*Store)(nil)

// Open reads the store at path (a missing file is an empty store). A
// corrupt file gives a usable empty store and a *CorruptError.
func Open(path string, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{path: path, now: time.Now, log: log, always: map[string]Record{}, session: map[sessionKey]string{}}
	if path == "" {
		return s, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s, s.loadLocked()
}

// Path is the store's file ("" in memory).
func (s *Store) Path() string { return s.path }

func (s *Store) loadLocked() error {
	st, err := os.Stat(s.path)
	if errors.Is(err, os.ErrNotExist) {
		s.always, s.stamp, s.corrupt = map[string]Record{}, state.Stamp{}, false
		return nil
	}
	if err != nil {
		return fmt.Errorf("decisions: %w", err)
	}
	cur := state.StampOf(st)
	if cur == s.stamp {
		return nil
	}
	s.stamp = cur
	recs, err := read(s.path, st.Size())
	if err != nil {
		s.always, s.corrupt = map[string]Record{}, true
		return &CorruptError{Path: s.path, Err: err}
	}
	s.corrupt = false
	s.always = byKey(recs)
	return nil
}

func byKey(recs []Record) map[string]Record {
	m := make(map[string]Record, len(recs))
	for _, r := range recs {
		m[r.key()] = r
	}
	return m
}

func read(path string, size int64) ([]Record, error) {
	if size > maxFile {
		return nil, fmt.Errorf("larger than %d bytes", maxFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse decodes a decisions file, rejecting anything but versions 1 and 2
// with non-empty names. A version 1 file's decisions have no identity
// (legacy: never applied).
func Parse(data []byte) ([]Record, error) {
	var f file
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a decisions file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not a decisions file: trailing data")
	}
	if f.Version != 1 && f.Version != fileVersion {
		return nil, fmt.Errorf("unsupported version %d (want %d)", f.Version, fileVersion)
	}
	for i, r := range f.Decisions {
		if r.Tool == "" || r.Provider == "" {
			return nil, fmt.Errorf("decision %d: tool and provider are required", i+1)
		}
		if f.Version == 1 {
			f.Decisions[i].Identity = "" // keyed by name only: for every caller
		}
	}
	return f.Decisions, nil
}

// refresh re-reads the file if another process changed it. A read error
// keeps the store as it is (a decision is never applied from a bad file).
func (s *Store) refreshLocked() {
	switch {
	case s.shared != nil:
		_ = s.loadShared()
	case s.path != "":
		_ = s.loadLocked()
	}
}

// Allowed reports whether a remembered decision confirms calling t for
// scope: one for this identity's session, or an "always" for this
// identity, made for the same canonical name while the same provider
// owned it and it had the same definition (its digest). A legacy
// decision (no identity) never applies.
func (s *Store) Allowed(t catalog.Tool, scope pipeline.DecisionScope) bool {
	id := ScopeIdentity(scope.Identity)
	if t.Canonical == "" || id == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.session[sessionKey{id, scope.Session, t.Canonical}]; ok && scope.Session != "" && p == t.Provider+"\x00"+t.Digest {
		return true
	}
	s.refreshLocked()
	r, ok := s.always[Record{Identity: id, Tool: t.Canonical}.key()]
	return ok && r.Identity == id && r.Provider == t.Provider && r.Digest == t.Digest
}

// Remember records a session or "always" decision for scope; others are
// ignored, and so is a scope without an identity. A failed write is
// logged; the decision still holds in this process.
func (s *Store) Remember(t catalog.Tool, scope pipeline.DecisionScope, a policy.Approval) {
	if err := s.remember(t, scope, a); err != nil {
		s.log.Error("remembering a decision", "tool", t.Canonical, "err", err)
	}
}

func (s *Store) remember(t catalog.Tool, scope pipeline.DecisionScope, a policy.Approval) error {
	id := ScopeIdentity(scope.Identity)
	if t.Canonical == "" || t.Provider == "" || id == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch a {
	case policy.ApprovedForSession:
		if scope.Session == "" {
			return nil // no session (stateless HTTP): nothing to remember it for; it approved this call
		}
		s.session[sessionKey{id, scope.Session, t.Canonical}] = t.Provider + "\x00" + t.Digest
		return nil
	case policy.ApprovedAlways:
		s.refreshLocked()
		r := Record{Tool: t.Canonical, Provider: t.Provider, Identity: id, Digest: t.Digest, Time: s.now().UTC().Truncate(time.Second)}
		s.always[r.key()] = r
		return s.saveLocked()
	}
	return nil
}

// List returns the "always" decisions sorted by name, then identity.
func (s *Store) List() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	return sorted(s.always)
}

func sorted(m map[string]Record) []Record {
	out := make([]Record, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Record) int {
		if c := strings.Compare(a.Tool, b.Tool); c != 0 {
			return c
		}
		return strings.Compare(a.Identity, b.Identity)
	})
	return out
}

// Revoke forgets the decisions for a canonical name, for every identity
// (legacy ones too); it reports whether there was one.
func (s *Store) Revoke(name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	for k := range s.session {
		if k.tool == name {
			delete(s.session, k)
		}
	}
	found := false
	for k, r := range s.always {
		if r.Tool == name {
			delete(s.always, k)
			found = true
		}
	}
	if !found {
		return false, nil
	}
	return true, s.saveLocked()
}

// Clear forgets every decision and removes the file (a corrupt one too).
func (s *Store) Clear() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always, s.session, s.corrupt, s.stamp = map[string]Record{}, map[sessionKey]string{}, false, state.Stamp{}
	if s.shared != nil {
		return s.saveShared()
	}
	if s.path == "" {
		return nil
	}
	if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("decisions: %w", err)
	}
	return nil
}

// saveLocked writes the file atomically. A corrupt file is kept aside
// (path.corrupt) rather than overwritten, so nothing a person wrote is lost.
func (s *Store) saveLocked() error {
	if s.shared != nil {
		return s.saveShared()
	}
	if s.path == "" {
		return nil
	}
	if s.corrupt {
		if err := os.Rename(s.path, s.path+".corrupt"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("decisions: keeping the unreadable file aside: %w", err)
		}
		s.corrupt = false
	}
	data, err := json.MarshalIndent(file{Version: fileVersion, Decisions: sorted(s.always)}, "", "  ")
	if err != nil {
		return err
	}
	if err := state.WriteFile(s.path, append(data, '\n')); err != nil {
		return fmt.Errorf("decisions: %w", err)
	}
	if st, err := os.Stat(s.path); err == nil {
		s.stamp = state.StampOf(st)
	}
	return nil
}

// Status is how a decision relates to the catalog now.
type Status string

const (
	// Active: the name exists and belongs to the provider the person allowed.
	Active Status = "active"
	// Stale: the name is gone, or now belongs to another provider; never applied.
	Stale Status = "stale"
	// Legacy: made by an older version for every caller (no identity);
	// never applied: a person approves again, for one caller.
	Legacy Status = "legacy"
)

// Classify says whether r still applies, given the provider that owns the
// name now ("" when no tool has it).
func Classify(r Record, owner string) Status {
	if r.Identity == "" {
		return Legacy
	}
	if owner != "" && owner == r.Provider {
		return Active
	}
	return Stale
}

// PathFor is where the binary keeps decisions: next to the config file
// (the named one, else the one in the project directory), or, in
// zero-config, in the project directory.
func PathFor(configFile, projectDir string) string {
	if configFile != "" {
		return filepath.Join(filepath.Dir(configFile), FileName)
	}
	return filepath.Join(projectDir, FileName)
}
