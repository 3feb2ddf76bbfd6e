// Package decisions remembers confirmations a person made once: "always
// allow this tool" (persisted) and "always for this session" (in memory).
//
// Decisions are keyed by canonical name only (never by a tool's
// original name, a suffix or an alias) and record the provider that owned
// the name when the person decided; a decision whose name now belongs to
// another provider, or to no tool at all, is stale and never applied.
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
	Provider string    `json:"provider"`
	Time     time.Time `json:"time"`
	// Digest is the tool's definition digest when the person decided
	// (catalog.Definition.Digest): a tool whose upstream changed its
	// name, description, schemas or annotations since asks again (docs/pins.md).
	Digest string `json:"digest,omitempty"`
}

type fileV1 struct {
	Version   int      `json:"version"`
	Decisions []Record `json:"decisions"`
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
	shared  state.Store           // "always" decisions live here instead of the file (see Share)
}

type sessionKey struct{ session, tool string }

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
	s.always = make(map[string]Record, len(recs))
	for _, r := range recs {
		s.always[r.Tool] = r
	}
	return nil
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

// Parse decodes a decisions file, rejecting anything but version 1 with
// non-empty names.
func Parse(data []byte) ([]Record, error) {
	var f fileV1
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a decisions file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not a decisions file: trailing data")
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("unsupported version %d (want 1)", f.Version)
	}
	for i, r := range f.Decisions {
		if r.Tool == "" || r.Provider == "" {
			return nil, fmt.Errorf("decision %d: tool and provider are required", i+1)
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

// Allowed reports whether a remembered decision confirms calling t: one for
// this session, or an "always" made for the same canonical name while the
// same provider owned it and it had the same definition (its digest).
func (s *Store) Allowed(t catalog.Tool, session string) bool {
	if t.Canonical == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.session[sessionKey{session, t.Canonical}]; ok && session != "" && p == t.Provider+"\x00"+t.Digest {
		return true
	}
	s.refreshLocked()
	r, ok := s.always[t.Canonical]
	if !ok || r.Provider != t.Provider {
		return false
	}
	if r.Digest == "" && t.Digest != "" {
		// A decision made before definitions had digests (an older file, or
		// one written by hand) is bound to the definition it first meets,
		// as the pin store pins a tool on its first listing: from then on a
		// changed definition asks again, and upgrading asks nobody twice.
		r.Digest = t.Digest
		s.always[t.Canonical] = r
		if err := s.saveLocked(); err != nil {
			s.log.Error("binding a decision to its definition", "tool", t.Canonical, "err", err)
		}
		return true
	}
	return r.Digest == t.Digest
}

// Remember records a session or "always" decision; others are ignored. A
// failed write is logged; the decision still holds in this process.
func (s *Store) Remember(t catalog.Tool, session string, a policy.Approval) {
	if err := s.remember(t, session, a); err != nil {
		s.log.Error("remembering a decision", "tool", t.Canonical, "err", err)
	}
}

func (s *Store) remember(t catalog.Tool, session string, a policy.Approval) error {
	if t.Canonical == "" || t.Provider == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch a {
	case policy.ApprovedForSession:
		if session == "" {
			return nil // no session (stateless HTTP): nothing to remember it for; it approved this call
		}
		s.session[sessionKey{session, t.Canonical}] = t.Provider + "\x00" + t.Digest
		return nil
	case policy.ApprovedAlways:
		s.refreshLocked()
		s.always[t.Canonical] = Record{Tool: t.Canonical, Provider: t.Provider, Digest: t.Digest, Time: s.now().UTC().Truncate(time.Second)}
		return s.saveLocked()
	}
	return nil
}

// List returns the "always" decisions sorted by name.
func (s *Store) List() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	out := make([]Record, 0, len(s.always))
	for _, r := range s.always {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// Revoke forgets the decision for a canonical name; it reports whether there was one.
func (s *Store) Revoke(name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	for k := range s.session {
		if k.tool == name {
			delete(s.session, k)
		}
	}
	if _, ok := s.always[name]; !ok {
		return false, nil
	}
	delete(s.always, name)
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
	recs := make([]Record, 0, len(s.always))
	for _, r := range s.always {
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b Record) int { return strings.Compare(a.Tool, b.Tool) })
	data, err := json.MarshalIndent(fileV1{Version: 1, Decisions: recs}, "", "  ")
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
)

// Classify says whether r still applies, given the provider that owns the
// name now ("" when no tool has it).
func Classify(r Record, owner string) Status {
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
