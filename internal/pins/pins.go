// Package pins remembers the definition of every published tool (docs/pins.md):
// the first definition a tool is seen with is pinned by its digest, and a
// later, different one is a change a person must look at. In warn mode the
// changed tool stays callable and the change is logged, audited and shown by
// doctor and the console until approved; in quarantine mode the tool is held
// back from every listing, search and call until a person approves the new
// definition (console, or `agent-tools pins approve <tool>`).
//
// Pins live in one JSON file next to the config, like the decisions file, or
// in the shared state store when replicas share state (server.redis), so an
// approval on one replica reaches the others.
package pins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/state"
)

// FileName is the pins file, in the config's directory.
const FileName = "agent-tools.pins.json"

// sharedKey holds the pins when replicas share state.
const sharedKey = "pins:v1"

// maxFile bounds what is read.
const maxFile = 16 << 20

// Mode is security.pin.
type Mode string

const (
	// Warn keeps a changed tool callable and reports the change.
	Warn Mode = "warn"
	// Quarantine holds a changed tool back until a person approves it.
	Quarantine Mode = "quarantine"
)

// ParseMode reads security.pin ("" is Warn).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Warn:
		return Warn, nil
	case Quarantine:
		return Quarantine, nil
	}
	return "", fmt.Errorf("security.pin: %q is not warn or quarantine", s)
}

// Pending is a definition an upstream now publishes that differs from the pin.
type Pending struct {
	Digest string             `json:"digest"`
	Def    catalog.Definition `json:"definition"`
	Since  time.Time          `json:"since"`
}

// Record is one tool's pin.
type Record struct {
	// Tool is the canonical name.
	Tool     string             `json:"tool"`
	Provider string             `json:"provider"`
	Digest   string             `json:"digest"`
	Def      catalog.Definition `json:"definition"`
	Time     time.Time          `json:"time"`
	// Changed is set while the upstream publishes another definition.
	Changed *Pending `json:"changed,omitempty"`
}

type fileV1 struct {
	Version int `json:"version"`
	// Approvals counts approvals: a running server that sees it move
	// re-admits the tools it held back (an approval from the command line).
	Approvals uint64   `json:"approvals"`
	Pins      []Record `json:"pins"`
}

// Change is reported once per new definition of a pinned tool.
type Change struct {
	Record
	Mode Mode
}

// Store is safe for concurrent use. Path "" keeps pins in memory only.
type Store struct {
	path string
	mode Mode
	log  *slog.Logger
	now  func() time.Time

	mu        sync.Mutex
	recs      map[string]*Record
	approvals uint64
	stamp     state.Stamp
	checked   time.Time // last re-read of the file or shared record (throttled)
	shared    state.Store
	onChange  []func(Change)
}

// Open reads the pins at path (a missing file is an empty store). An
// unreadable file gives an empty store and an error: it is moved aside on
// the first write, never silently trusted.
func Open(path string, mode Mode, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if mode == "" {
		mode = Warn
	}
	s := &Store{path: path, mode: mode, log: log, now: time.Now, recs: map[string]*Record{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s, s.loadLocked(true)
}

// Mode is the mode in force.
func (s *Store) Mode() Mode { return s.mode }

// SetMode changes the mode (a config reload).
func (s *Store) SetMode(m Mode) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
}

// Share keeps the pins in st instead of the file (replicas with Redis).
func (s *Store) Share(st state.Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shared = st
	_ = s.loadLocked(true)
}

// OnChange registers f to run (with the store's lock held: keep it short)
// once for each new definition of a pinned tool.
func (s *Store) OnChange(f func(Change)) {
	s.mu.Lock()
	s.onChange = append(s.onChange, f)
	s.mu.Unlock()
}

// Where says where pins live, for messages.
func (s *Store) Where() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.shared != nil:
		return "shared state (server.redis)"
	case s.path == "":
		return "memory"
	}
	return s.path
}

// Parse decodes a pins file.
func Parse(data []byte) (approvals uint64, recs []Record, err error) {
	var f fileV1
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return 0, nil, fmt.Errorf("not a pins file: %w", err)
	}
	if dec.More() {
		return 0, nil, errors.New("not a pins file: trailing data")
	}
	if f.Version != 1 {
		return 0, nil, fmt.Errorf("unsupported version %d (want 1)", f.Version)
	}
	for i, r := range f.Pins {
		if r.Tool == "" || r.Provider == "" || r.Digest == "" {
			return 0, nil, fmt.Errorf("pin %d: tool, provider and digest are required", i+1)
		}
		if r.Changed != nil && r.Changed.Digest == "" {
			return 0, nil, fmt.Errorf("pin %d: a change needs its digest", i+1)
		}
	}
	return f.Approvals, f.Pins, nil
}

// loadLocked re-reads the backing file or record. Unless force, it does so
// at most once a second: Generation runs on every call's fast path.
func (s *Store) loadLocked(force bool) error {
	now := s.now()
	if !force && now.Sub(s.checked) < time.Second {
		return nil
	}
	s.checked = now
	var data []byte
	switch {
	case s.shared != nil:
		ctx, cancel := context.WithTimeout(context.Background(), 2*state.OpTimeout)
		defer cancel()
		d, err := s.shared.Get(ctx, sharedKey)
		if errors.Is(err, state.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("pins: reading shared state: %w", err)
		}
		data = d
	case s.path != "":
		st, err := os.Stat(s.path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("pins: %w", err)
		}
		cur := state.StampOf(st)
		if cur == s.stamp {
			return nil
		}
		s.stamp = cur
		if st.Size() > maxFile {
			return fmt.Errorf("pins file %s is larger than %d bytes", s.path, maxFile)
		}
		if data, err = os.ReadFile(s.path); err != nil {
			return fmt.Errorf("pins: %w", err)
		}
	default:
		return nil
	}
	approvals, recs, err := Parse(data)
	if err != nil {
		return fmt.Errorf("pins file %s is unreadable (%v); keeping the pins this process has", s.Where0(), err)
	}
	s.approvals = approvals
	s.recs = make(map[string]*Record, len(recs))
	for i := range recs {
		s.recs[recs[i].Tool] = &recs[i]
	}
	return nil
}

// Where0 is Where without the lock.
func (s *Store) Where0() string {
	if s.shared != nil {
		return "shared state"
	}
	return s.path
}

func (s *Store) saveLocked() error {
	recs := make([]Record, 0, len(s.recs))
	for _, r := range s.recs {
		recs = append(recs, *r)
	}
	slices.SortFunc(recs, func(a, b Record) int { return strings.Compare(a.Tool, b.Tool) })
	data, err := json.MarshalIndent(fileV1{Version: 1, Approvals: s.approvals, Pins: recs}, "", "  ")
	if err != nil {
		return err
	}
	switch {
	case s.shared != nil:
		ctx, cancel := context.WithTimeout(context.Background(), 2*state.OpTimeout)
		defer cancel()
		if err := s.shared.Put(ctx, sharedKey, data, 0); err != nil {
			return fmt.Errorf("pins: writing shared state: %w", err)
		}
	case s.path != "":
		if err := writeAtomic(s.path, append(data, '\n')); err != nil {
			return fmt.Errorf("pins: %w", err)
		}
		if st, err := os.Stat(s.path); err == nil {
			s.stamp = state.StampOf(st)
		}
	}
	return nil
}

// Observe pins every tool not pinned yet, records the changed definitions,
// and returns the canonical names to hold back (quarantine mode only). Each
// tool must have Canonical, Provider and Digest set. A tool whose name now
// belongs to another provider is pinned afresh: the name's old pin was
// another tool's.
func (s *Store) Observe(tools []catalog.Tool) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(true); err != nil {
		s.log.Warn("pins", "err", err)
	}
	var held map[string]bool
	dirty := false
	now := s.now().UTC().Truncate(time.Second)
	for _, t := range tools {
		if t.Canonical == "" || t.Digest == "" {
			continue
		}
		r, ok := s.recs[t.Canonical]
		switch {
		case !ok || r.Provider != t.Provider:
			s.recs[t.Canonical] = &Record{Tool: t.Canonical, Provider: t.Provider, Digest: t.Digest, Def: t.Def(), Time: now}
			dirty = true
		case r.Digest == t.Digest:
			if r.Changed != nil { // the upstream went back to the pinned definition
				r.Changed, dirty = nil, true
			}
		default:
			if r.Changed == nil || r.Changed.Digest != t.Digest {
				r.Changed, dirty = &Pending{Digest: t.Digest, Def: t.Def(), Since: now}, true
				s.log.Warn("a pinned tool's definition changed", "tool", t.Canonical, "provider", t.Provider,
					"mode", string(s.mode), "diff", Diff(r.Def, r.Changed.Def))
				for _, f := range s.onChange {
					f(Change{Record: *r, Mode: s.mode})
				}
			}
			if s.mode == Quarantine {
				if held == nil {
					held = map[string]bool{}
				}
				held[t.Canonical] = true
			}
		}
	}
	if dirty {
		if err := s.saveLocked(); err != nil {
			s.log.Error("saving pins", "err", err)
		}
	}
	return held
}

// Generation changes when a tool is approved (here, or by another process
// through the file or shared record): the registry then re-admits the
// tools it held back. It re-reads at most once a second.
func (s *Store) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.loadLocked(false)
	return s.approvals
}

// ErrNoChange is returned by Approve for a tool with nothing to approve.
var ErrNoChange = errors.New("no changed definition to approve")

// Approve makes a tool's changed definition its pin.
func (s *Store) Approve(tool string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(true); err != nil {
		return Record{}, err
	}
	r, ok := s.recs[tool]
	if !ok {
		return Record{}, fmt.Errorf("%q: no pin by that name (canonical names only; see agent-tools pins list)", tool)
	}
	if r.Changed == nil {
		return *r, fmt.Errorf("%q: %w", tool, ErrNoChange)
	}
	r.Digest, r.Def, r.Time, r.Changed = r.Changed.Digest, r.Changed.Def, s.now().UTC().Truncate(time.Second), nil
	s.approvals++
	return *r, s.saveLocked()
}

// List returns every pin sorted by name.
func (s *Store) List() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.loadLocked(true)
	out := make([]Record, 0, len(s.recs))
	for _, r := range s.recs {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// Changed returns the pins whose tool now publishes another definition.
func (s *Store) Changed() []Record {
	var out []Record
	for _, r := range s.List() {
		if r.Changed != nil {
			out = append(out, r)
		}
	}
	return out
}

// PathFor is where the binary keeps pins: under the user's state directory
// ($XDG_STATE_HOME/agent-tools/pins, else ~/.local/state/agent-tools/pins),
// one file per project, named by a hash of its directory: pinning happens on
// every listing, and a command run in a repository (doctor, list) must not
// leave a file in it that nobody asked for. With a config file (haveConfig)
// whose directory already holds agent-tools.pins.json, as an operator set it
// up (to commit the pins), that file. lookupEnv is os.LookupEnv or a test's.
func PathFor(decisionsPath string, haveConfig bool, lookupEnv func(string) (string, bool)) string {
	if decisionsPath == "" {
		return ""
	}
	dir := filepath.Dir(decisionsPath)
	if beside := filepath.Join(dir, FileName); haveConfig {
		if _, err := os.Stat(beside); err == nil {
			return beside
		}
	}
	state := ""
	if d, ok := lookupEnv("XDG_STATE_HOME"); ok && filepath.IsAbs(d) {
		state = filepath.Join(d, "agent-tools")
	} else if h, ok := lookupEnv("HOME"); ok && filepath.IsAbs(h) {
		state = filepath.Join(h, ".local", "state", "agent-tools")
	}
	if state == "" {
		return filepath.Join(dir, FileName) // no state directory: as with a config
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(state, "pins", filepath.Base(dir)+"-"+hex.EncodeToString(sum[:6])+".json")
}

// writeAtomic replaces the pins file, creating the state directory when it
// is new.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return state.WriteFile(path, data)
}

// Diagnostics are doctor's lines: one per tool whose upstream changed its
// pinned definition, with the diff and how to approve it.
func (s *Store) Diagnostics() []provider.Diagnostic {
	var out []provider.Diagnostic
	for _, r := range s.Changed() {
		what := "changed since it was pinned (security.pin: warn, still callable)"
		if s.Mode() == Quarantine {
			what = "quarantined: changed since it was pinned (security.pin: quarantine)"
		}
		out = append(out, provider.Diagnostic{Provider: r.Provider, Item: r.Tool, Status: "warning",
			Reason: what + ": " + Diff(r.Def, r.Changed.Def) + "; approve with `agent-tools pins approve " + r.Tool + "` or in the console"})
	}
	return out
}
