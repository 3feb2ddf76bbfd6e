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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/scan"
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
	// Findings are the scanner's on this definition.
	Findings []scan.Finding `json:"findings,omitempty"`
}

// Record is one tool's pin.
type Record struct {
	// Tool is the canonical name.
	Tool     string `json:"tool"`
	Provider string `json:"provider"`
	// Digest is the trusted definition's; "" for a tool that appeared
	// after its provider's tools were pinned (New) or that the scanner
	// held back on first sight: nothing of it is trusted yet.
	Digest string             `json:"digest"`
	Def    catalog.Definition `json:"definition"`
	Time   time.Time          `json:"time"`
	// Changed is set while the upstream publishes another definition (or,
	// with Digest "", the definition waiting for a first approval).
	Changed *Pending `json:"changed,omitempty"`
	// New: the tool appeared after its provider's tools were pinned; it
	// stays new until a person approves it.
	New bool `json:"new,omitempty"`
	// Findings are the scanner's on the pinned definition; Scanned is the
	// rule set's version they come from ("" never scanned), Approved that
	// a person approved this definition (findings and all).
	Findings []scan.Finding `json:"findings,omitempty"`
	Scanned  string         `json:"scanned,omitempty"`
	Approved bool           `json:"approved,omitempty"`
	// Fields is 2 for a pin that covers icons and _meta too (digests
	// before that did not); see adoptLocked.
	Fields int `json:"fields,omitempty"`

	// raw is the pin as read, while its definition is not decoded (load.go).
	raw []byte
}

// fieldsNow is what a pin covers today (Record.Fields).
const fieldsNow = 2

// Status is how a pin shows in lists: pinned, changed, new or suspicious.
func (r Record) Status() string {
	switch {
	case r.New:
		return "new"
	case r.Changed != nil && r.Digest == "":
		return "suspicious"
	case r.Changed != nil:
		return "changed"
	case len(r.Findings) > 0 && !r.Approved:
		return "suspicious"
	}
	return "pinned"
}

type fileV1 struct {
	Version int `json:"version"`
	// Approvals counts approvals: a running server that sees it move
	// re-admits the tools it held back (an approval from the command line).
	Approvals uint64   `json:"approvals"`
	Pins      []Record `json:"pins"`
}

// Change is reported once per new definition of a pinned tool, per new
// tool of a pinned provider and per tool the scanner flags on first sight.
type Change struct {
	Record
	Mode Mode
	// Event is pin_changed, pin_new or scan_finding (the audit's event).
	Event string
	// Held: the tool is held back until a person approves it.
	Held bool
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
	shared    *state.Signed
	onChange  []func(Change)

	// gen mirrors approvals for Generation while a watcher keeps the store
	// current (Watch): then a call reads it with one atomic load, and the
	// re-read (a Redis GET, a file stat) never runs on a call's path.
	gen     atomic.Uint64
	watched atomic.Bool
	// onApproved is called (outside the lock) when the watcher sees an
	// approval made by another process (SetOnApproved).
	onApproved func()
	// quarantined are providers whose tools wait for a person from their
	// first listing on, whatever the mode (a provider's pin: quarantine).
	quarantined map[string]bool

	// index is the pins file's index ("" none; index.go). lazy, when not
	// nil, are the pins as read from it (recs is then empty): what a warm
	// start needs of each, without definitions or times, which the file
	// has (materializeLocked). indexOf is the version of the file the index
	// on disk describes, as last read or written.
	index   string
	lazy    heads
	noIndex bool // materializeLocked: the file itself
	indexOf fileVersion
}

// SetOnApproved sets what runs when the watcher sees an approval made by
// another process: the runtime re-admits the tools it held and tells its
// own sessions (list_changed), as the process that approved did.
func (s *Store) SetOnApproved(f func()) {
	s.mu.Lock()
	s.onApproved = f
	s.mu.Unlock()
}

// Open reads the pins at path (a missing file is an empty store). An
// unreadable file gives an empty store and an error: it is moved aside on
// the first write, never silently trusted.
func Open(path string, mode Mode, log *slog.Logger) (*Store, error) {
	return OpenIndexed(path, "", mode, log)
}

// OpenIndexed is Open keeping a compact index of the pins file at index
// (IndexPath; "" none), which a warm start reads instead of the file while
// the file is the one the index was made from (index.go).
func OpenIndexed(path, index string, mode Mode, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if mode == "" {
		mode = Warn
	}
	if path == "" {
		index = ""
	}
	s := &Store{path: path, index: index, mode: mode, log: log, now: time.Now, recs: map[string]*Record{}}
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

// SetQuarantined names the providers whose tools are new until approved
// from their first listing on, and whose changes are held whatever the
// mode (providers with pin: quarantine, as `agent-tools registry add`
// writes them).
func (s *Store) SetQuarantined(providers []string) {
	s.mu.Lock()
	s.quarantined = map[string]bool{}
	for _, p := range providers {
		s.quarantined[p] = true
	}
	s.mu.Unlock()
}

// Share keeps the pins in st instead of the file (replicas with Redis).
// The record is sealed with the cluster key (st is a state.Signed): a
// record that does not verify — a plain SET by anyone who can write to
// Redis — is refused, logged, and treated as absent (this process keeps
// the pins it has), so writing to Redis approves no definition.
func (s *Store) Share(st *state.Signed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.materializeLocked() // the file's pins whole, until the shared record replaces them
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
		if r.Tool == "" || r.Provider == "" || r.Digest == "" && r.Changed == nil {
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
	var version fileVersion
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
		var done bool
		if data, version, done, err = s.readFileLocked(); done || err != nil {
			return err
		}
	default:
		return nil
	}
	approvals, recs, err := parseFast(data)
	if err != nil {
		return fmt.Errorf("pins file %s is unreadable (%v); keeping the pins this process has", s.Where0(), err)
	}
	s.setLocked(approvals, recs)
	if s.index != "" && s.shared == nil && version != s.indexOf {
		s.writeIndexLocked(version)
	}
	return nil
}

// setLocked replaces the pins with recs.
func (s *Store) setLocked(approvals uint64, recs []Record) {
	s.approvals, s.lazy = approvals, nil
	s.gen.Store(approvals)
	s.recs = make(map[string]*Record, len(recs))
	for i := range recs {
		s.recs[recs[i].Tool] = &recs[i]
	}
}

// readFileLocked reads the pins file. With an index of this very file
// (index.go) it takes the pins from the index and reports done; else it
// returns the file's bytes and version, for parsing.
func (s *Store) readFileLocked() (data []byte, v fileVersion, done bool, err error) {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, v, true, nil // gone since the stat: as if it was not there
	}
	if err != nil {
		return nil, v, false, fmt.Errorf("pins: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, v, false, fmt.Errorf("pins: %w", err)
	}
	s.stamp = state.StampOf(fi)
	if fi.Size() > maxFile {
		return nil, v, false, fmt.Errorf("pins file %s is larger than %d bytes", s.path, maxFile)
	}
	if s.index != "" && s.shared == nil && !s.noIndex {
		if s.readIndexLocked(f, fi) {
			return nil, v, true, nil
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, v, false, fmt.Errorf("pins: %w", err)
		}
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, maxFile+1)); err != nil {
		return nil, v, false, fmt.Errorf("pins: %w", err)
	}
	if buf.Len() > maxFile {
		return nil, v, false, fmt.Errorf("pins file %s is larger than %d bytes", s.path, maxFile)
	}
	data = buf.Bytes()
	return data, versionOf(fi, crc32.Checksum(data, crcTable)), false, nil
}

// readIndexLocked takes the pins from the index when it describes the file
// f as it is (its version and the CRC of its bytes), and reports whether
// it did. A missing or stale index is silent; a corrupt one is logged.
func (s *Store) readIndexLocked(f *os.File, fi os.FileInfo) bool {
	idx, err := os.Open(s.index)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("pins index unreadable; reading the pins file", "index", s.index, "err", err)
		}
		return false
	}
	var buf bytes.Buffer
	if st, err := idx.Stat(); err == nil && st.Size() < maxIndex {
		buf.Grow(int(st.Size()) + bytes.MinRead)
	}
	_, err = buf.ReadFrom(io.LimitReader(idx, maxIndex+1))
	idx.Close()
	data := buf.Bytes()
	if err != nil || len(data) > maxIndex {
		s.log.Warn("pins index unreadable; reading the pins file", "index", s.index, "err", err)
		return false
	}
	v, approvals, hs, err := decodeIndex(data)
	if err != nil {
		s.log.Warn("pins index ignored; reading the pins file (a new index replaces it)", "index", s.index, "err", err)
		return false
	}
	want := versionOf(fi, v.crc)
	if v != want {
		s.log.Debug("pins index is stale; reading the pins file", "index", s.index)
		return false
	}
	crc, err := crcOf(f) // the file's bytes, not only its stamp
	if err != nil || crc != v.crc {
		s.log.Debug("pins index is stale (the file's bytes differ); reading the pins file", "index", s.index)
		return false
	}
	s.approvals, s.lazy, s.recs, s.indexOf = approvals, hs, map[string]*Record{}, v
	s.gen.Store(approvals)
	return true
}

// writeIndexLocked writes the index of the pins as they are, from the
// file of version v (a failure is logged: the index is a cache).
func (s *Store) writeIndexLocked(v fileVersion) {
	recs := make([]*Record, 0, len(s.recs))
	for _, r := range s.recs {
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b *Record) int { return strings.Compare(a.Tool, b.Tool) })
	data, err := encodeIndex(v, s.approvals, recs)
	if err == nil {
		err = writeIndexFile(s.index, data)
	}
	if err != nil {
		s.log.Warn("pins index not written; the next start reads the pins file", "index", s.index, "err", err)
		return
	}
	s.indexOf = v
}

// materializeLocked reads the pins file when the pins came from the index:
// before a pin's definition is needed, or the pins are changed and written.
func (s *Store) materializeLocked() error {
	if s.lazy == nil || s.path == "" || s.shared != nil {
		return nil
	}
	s.noIndex, s.stamp = true, state.Stamp{}
	defer func() { s.noIndex = false }()
	if err := s.loadLocked(true); err != nil {
		return err
	}
	if s.lazy != nil {
		return fmt.Errorf("pins file %s is gone; its pins' definitions are not in memory", s.path)
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
	if s.shared == nil && s.path == "" {
		return nil // in memory only: nothing to write
	}
	if s.lazy != nil {
		// Never reached: whatever changes a pin reads the file first. The
		// pins from the index have no definitions to write.
		return errors.New("pins: not written: the pins file could not be read back")
	}
	recs := make([]*Record, 0, len(s.recs))
	for _, r := range s.recs {
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b *Record) int { return strings.Compare(a.Tool, b.Tool) })
	// One pin a line: a pin not decoded since it was read is written as
	// it was (load.go).
	// Encoded first and written into one buffer of the right size: grown
	// pin by pin, 10,000 pins (~15 MB) were copied over ~20 times, a
	// third of what pinning costs a cold start.
	encoded, size := make([][]byte, len(recs)), 64
	for i, r := range recs {
		b, err := r.encode()
		if err != nil {
			return err
		}
		encoded[i], size = b, size+len(b)+2
	}
	var buf bytes.Buffer
	buf.Grow(size)
	fmt.Fprintf(&buf, "{\"version\": 1, \"approvals\": %d, \"pins\": [", s.approvals)
	for i, b := range encoded {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n")
		buf.Write(b)
	}
	buf.WriteString("\n]}")
	data := buf.Bytes()
	switch {
	case s.shared != nil:
		ctx, cancel := context.WithTimeout(context.Background(), 2*state.OpTimeout)
		defer cancel()
		if err := s.shared.Put(ctx, sharedKey, data, 0); err != nil {
			return fmt.Errorf("pins: writing shared state: %w", err)
		}
	case s.path != "":
		data = append(data, '\n') // within the buffer's slack: no copy
		if err := writeAtomic(s.path, data); err != nil {
			return fmt.Errorf("pins: %w", err)
		}
		if st, err := os.Stat(s.path); err == nil {
			s.stamp = state.StampOf(st)
			if s.index != "" {
				// Another process replacing the file after the rename gives
				// a version whose bytes are not these: the index is then
				// stale and not used.
				s.writeIndexLocked(versionOf(st, crc32.Checksum(data, crcTable)))
			}
		}
	}
	return nil
}

// Batch is one provider's tool list for Observe.
type Batch struct {
	// Tools have Canonical, Provider and Digest set.
	Tools []catalog.Tool
	// Cached: the list was read from a cache, not said by the upstream just
	// now. Nothing is pinned or recorded from it: a tool is served only
	// when its digest is the pin's (or a change already recorded in warn
	// mode); the others are held until the live list is checked.
	Cached bool
	// Scan, when set, returns the scanner's findings on a tool; it is
	// called only for a definition not scanned by this rule set yet.
	Scan func(catalog.Tool) []scan.Finding
	// ScanMode is security.scan in force ("" is scan.Default, hold-high):
	// which findings hold a tool back is ScanMode.Holding's decision.
	ScanMode scan.Mode
}

// Hold reasons (Observe's answer).
const (
	HeldChanged    = "changed"    // the definition changed since it was pinned
	HeldNew        = "new"        // a new tool of a provider whose tools are pinned
	HeldSuspicious = "suspicious" // the scanner flagged it (security.scan: hold-high or quarantine)
	HeldUnchecked  = "unchecked"  // from a cache, not checked against the upstream yet
)

// Observe pins every tool not pinned yet, records the changed definitions,
// and returns the canonical names to hold back (quarantine mode only). Each
// tool must have Canonical, Provider and Digest set. A tool whose name now
// belongs to another provider is pinned afresh: the name's old pin was
// another tool's.
func (s *Store) Observe(tools []catalog.Tool) map[string]bool {
	held := s.ObserveBatch(Batch{Tools: tools})
	if len(held) == 0 {
		return nil
	}
	out := make(map[string]bool, len(held))
	for k := range held {
		out[k] = true
	}
	return out
}

// ObserveBatch is Observe of one provider's list, with the scanner and
// the cache taken into account; it returns each held tool's reason.
func (s *Store) ObserveBatch(b Batch) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(true); err != nil {
		s.log.Warn("pins", "err", err)
	}
	if s.lazy != nil {
		if held, ok := s.lazy.observe(b); ok {
			return held // the warm start's case: nothing to compare, record or pin
		}
		// The definitions are read.
		if err := s.materializeLocked(); err != nil {
			s.log.Warn("pins", "err", err)
			if s.lazy != nil { // still without definitions: serve what the pins hold, hold the rest
				held, _ := s.lazy.observeAs(b, true)
				return held
			}
		}
	}
	var held map[string]string
	hold := func(name, why string) {
		if held == nil {
			held = map[string]string{}
		}
		held[name] = why
	}
	dirty := false
	now := s.now().UTC().Truncate(time.Second)
	// The providers with trusted pins before this batch, taken when a tool
	// without a pin asks first. Until then the loop has pinned nothing
	// (only such a tool is pinned afresh) and changed no digest to or from
	// "", so the set is the one before the batch.
	var pinnedSet map[string]bool
	pinned := func(provider string) bool {
		if pinnedSet == nil {
			pinnedSet = s.pinnedProvidersLocked()
		}
		return pinnedSet[provider]
	}
	var events []Change
	for _, t := range b.Tools {
		if t.Canonical == "" || t.Digest == "" {
			continue
		}
		r, ok := s.recs[t.Canonical]
		if ok && r.Provider != t.Provider {
			ok = false // the name's pin was another tool's
		}
		if ok && r.Digest != t.Digest {
			r.full() // its definition is compared, shown or kept below
		}
		if ok && r.Digest != "" && r.Digest != t.Digest && s.adoptLocked(r, t) {
			dirty = true
		}
		// Findings, unless this exact definition was scanned by these rules.
		var findings []scan.Finding
		scanned := false
		if b.Scan != nil {
			switch {
			case ok && r.Digest == t.Digest && r.Scanned == scan.Version:
				findings, scanned = r.Findings, true
			case ok && r.Changed != nil && r.Changed.Digest == t.Digest && r.Digest != "" && r.Scanned == scan.Version:
				findings, scanned = r.Changed.Findings, true
			default:
				findings, scanned = b.Scan(t), true
			}
		}
		suspicious := b.ScanMode.Holds(findings)
		strict := s.quarantined[t.Provider] // pin: quarantine on the provider
		if b.Cached {
			switch {
			case ok && r.Digest == t.Digest:
				if suspicious && !r.Approved {
					hold(t.Canonical, HeldSuspicious)
				}
			case ok && r.Changed != nil && r.Changed.Digest == t.Digest && s.mode == Warn && !suspicious && r.Digest != "" && !strict:
			case !ok && !pinned(t.Provider) && s.mode == Warn && !suspicious && !strict:
				goto live // first sight, warn mode: pinned from the cache as before
			default:
				hold(t.Canonical, HeldUnchecked)
			}
			continue
		}
	live:
		switch {
		case !ok && (strict || pinned(t.Provider)):
			// A tool its provider did not have when its tools were pinned
			// (a look-alike beside a trusted one, say), or any tool of a
			// provider with pin: quarantine: new until approved.
			rec := &Record{Tool: t.Canonical, Provider: t.Provider, Time: now, New: true,
				Changed: &Pending{Digest: t.Digest, Def: t.Def(), Since: now, Findings: findings}}
			s.recs[t.Canonical], dirty = rec, true
			q := s.mode == Quarantine || suspicious || strict
			s.log.Warn("a new tool appeared beside pinned ones", append([]any{"tool", t.Canonical, "provider", t.Provider, "mode", string(s.mode), "held", q},
				scanAttrs(b.ScanMode, findings, t.Canonical)...)...)
			events = append(events, Change{Record: *rec, Mode: s.mode, Event: "pin_new", Held: q})
			if q {
				hold(t.Canonical, HeldNew)
			}
		case !ok && suspicious:
			rec := &Record{Tool: t.Canonical, Provider: t.Provider, Time: now,
				Changed: &Pending{Digest: t.Digest, Def: t.Def(), Since: now, Findings: findings}}
			s.recs[t.Canonical], dirty = rec, true
			s.log.Warn("the definition scanner holds a tool back until a person approves it", append([]any{"tool", t.Canonical, "provider", t.Provider},
				scanAttrs(b.ScanMode, findings, t.Canonical)...)...)
			events = append(events, Change{Record: *rec, Mode: s.mode, Event: "scan_finding", Held: true})
			hold(t.Canonical, HeldSuspicious)
		case !ok:
			rec := &Record{Tool: t.Canonical, Provider: t.Provider, Digest: t.Digest, Def: t.Def(), Time: now, Fields: fieldsNow}
			if scanned {
				rec.Findings, rec.Scanned = findings, scan.Version
			}
			s.recs[t.Canonical], dirty = rec, true
			if len(findings) > 0 {
				s.log.Warn("the definition scanner flags a tool; it is served", append([]any{"tool", t.Canonical, "provider", t.Provider},
					scanAttrs(b.ScanMode, findings, t.Canonical)...)...)
				events = append(events, Change{Record: *rec, Mode: s.mode, Event: "scan_finding"})
			}
		case r.Digest == t.Digest:
			if r.Changed != nil { // the upstream went back to the pinned definition
				r.Changed, dirty = nil, true
			}
			if scanned && r.Scanned != scan.Version {
				r.full()
				r.Findings, r.Scanned, dirty = findings, scan.Version, true
			}
			if suspicious && !r.Approved {
				hold(t.Canonical, HeldSuspicious)
			}
		default:
			if r.Changed == nil || r.Changed.Digest != t.Digest {
				r.Changed, dirty = &Pending{Digest: t.Digest, Def: t.Def(), Since: now, Findings: findings}, true
				q := s.mode == Quarantine || suspicious || strict
				ev := "pin_changed"
				if r.Digest == "" {
					ev = "pin_new"
					if !r.New {
						ev = "scan_finding"
					}
				}
				s.log.Warn("a pinned tool's definition changed", append([]any{"tool", t.Canonical, "provider", t.Provider,
					"mode", string(s.mode), "held", q, "diff", Diff(r.Def, r.Changed.Def)}, scanAttrs(b.ScanMode, findings, t.Canonical)...)...)
				events = append(events, Change{Record: *r, Mode: s.mode, Event: ev, Held: q})
			}
			switch {
			case (s.mode == Quarantine || strict) && r.New:
				hold(t.Canonical, HeldNew)
			case (s.mode == Quarantine || strict) && r.Digest != "":
				hold(t.Canonical, HeldChanged)
			case suspicious || r.Digest == "" && !r.New:
				hold(t.Canonical, HeldSuspicious)
			}
		}
	}
	if dirty {
		if err := s.saveLocked(); err != nil {
			s.log.Error("saving pins", "err", err)
		}
	}
	for _, c := range events {
		for _, f := range s.onChange {
			f(c)
		}
	}
	return held
}

// scanAttrs are a log line's words on the definition scanner's findings
// (none without findings): the mode in force, the rules that matched, each
// finding, and, when they hold the tool back, the command that approves it.
func scanAttrs(m scan.Mode, fs []scan.Finding, tool string) []any {
	if len(fs) == 0 {
		return nil
	}
	out := []any{"scanner", m.Setting(), "rules", strings.Join(scan.RuleIDs(fs), ","), "findings", scan.Summary(fs)}
	if m.Holds(fs) {
		out = append(out, "approve", "agent-tools pins approve "+tool)
	}
	return out
}

// pinnedProvidersLocked are the providers with at least one trusted pin.
func (s *Store) pinnedProvidersLocked() map[string]bool {
	out := map[string]bool{}
	for _, r := range s.recs {
		if r.Digest != "" {
			out[r.Provider] = true
		}
	}
	return out
}

// adoptLocked takes t's digest for r without a word when the definition
// is the pinned one written differently: the same canonical JSON (a schema
// re-ordered or re-indented), or, for a pin made before pins covered icons
// and _meta, the pinned definition plus the icons and _meta it has now.
func (s *Store) adoptLocked(r *Record, t catalog.Tool) bool {
	def := t.Def()
	if r.Fields < fieldsNow {
		old := def
		old.Icons, old.Meta = nil, nil
		if old.Digest() == r.Digest || Equal(r.Def, old) {
			r.Digest, r.Def, r.Fields = t.Digest, def, fieldsNow
			return true
		}
	}
	if Equal(r.Def, def) {
		r.Digest, r.Def, r.Fields = t.Digest, def, fieldsNow
		return true
	}
	return false
}

// Generation changes when a tool is approved (here, or by another process
// through the file or shared record): the registry then re-admits the
// tools it held back. It re-reads at most once a second.
func (s *Store) Generation() uint64 {
	if s.watched.Load() {
		return s.gen.Load()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.loadLocked(false)
	return s.approvals
}

// Watch re-reads the file or shared record every interval in the
// background until ctx ends, so that an approval made elsewhere (another
// replica's console, `agent-tools pins approve`) reaches this process
// within one interval while Generation, on every call's path, costs one
// atomic load instead of a Redis GET under the store's lock.
func (s *Store) Watch(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = time.Second
	}
	s.watched.Store(true)
	go func() {
		defer s.watched.Store(false)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.refresh(ctx)
			}
		}
	}()
}

// Sync re-reads the file or shared record now, as Watch does every
// interval: a replica told that a pin was approved on another one
// (cluster.Changes) serves it at once rather than at the next interval.
func (s *Store) Sync(ctx context.Context) { s.refresh(ctx) }

// refresh is one watcher step: the shared record is fetched without the
// lock (it may take a round trip), then applied under it.
func (s *Store) refresh(ctx context.Context) {
	s.mu.Lock()
	shared := s.shared
	s.mu.Unlock()
	if shared == nil {
		s.mu.Lock()
		if err := s.loadLocked(true); err != nil {
			s.log.Warn("pins", "err", err)
		}
		s.mu.Unlock()
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 2*state.OpTimeout)
	data, err := shared.Get(rctx, sharedKey)
	cancel()
	if errors.Is(err, state.ErrNotFound) {
		return
	}
	if err != nil {
		s.log.Warn("pins: reading shared state", "err", err)
		return
	}
	approvals, recs, err := parseFast(data)
	if err != nil {
		s.log.Warn("pins: shared record unreadable; keeping the pins this process has", "err", err)
		return
	}
	s.mu.Lock()
	if approvals == s.approvals {
		s.mu.Unlock()
		return // nothing approved since: keep what this process has (its own unsaved observations too)
	}
	s.setLocked(approvals, recs)
	s.checked = s.now()
	f := s.onApproved
	s.mu.Unlock()
	if f != nil {
		f()
	}
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
	if err := s.materializeLocked(); err != nil {
		return Record{}, err
	}
	r, ok := s.recs[tool]
	if !ok {
		return Record{}, fmt.Errorf("%q: no pin by that name (canonical names only; see agent-tools pins list)", tool)
	}
	r.full()
	switch {
	case r.Changed != nil:
		r.Digest, r.Def, r.Findings, r.Changed = r.Changed.Digest, r.Changed.Def, r.Changed.Findings, nil
		r.Scanned, r.Fields = scan.Version, fieldsNow
	case len(r.Findings) > 0 && !r.Approved: // flagged on first sight, in warn mode
	default:
		return *r, fmt.Errorf("%q: %w", tool, ErrNoChange)
	}
	r.Time, r.New, r.Approved = s.now().UTC().Truncate(time.Second), false, true
	s.approvals++
	s.gen.Store(s.approvals)
	return *r, s.saveLocked()
}

// List returns every pin sorted by name.
func (s *Store) List() []Record {
	out, _ := s.ListErr()
	return out
}

// ListErr is List, failing when the pins cannot be read (the shared store
// is unreachable, the file is unreadable): "no pins" must not be said of
// pins that could not be read.
func (s *Store) ListErr() ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.loadLocked(true)
	if err == nil {
		err = s.materializeLocked()
	}
	out := make([]Record, 0, len(s.recs))
	for _, r := range s.recs {
		r.full()
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Tool, b.Tool) })
	return out, err
}

// Changed returns the pins whose tool now publishes another definition
// (or a first one waiting for approval).
func (s *Store) Changed() []Record {
	var out []Record
	for _, r := range s.List() {
		if r.Changed != nil {
			out = append(out, r)
		}
	}
	return out
}

// Attention returns the pins a person should look at: changed, new, and
// flagged by the scanner and not approved.
func (s *Store) Attention() []Record {
	var out []Record
	for _, r := range s.List() {
		if r.Status() != "pinned" {
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
	state := stateDir(lookupEnv)
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
// pinned definition, that is new beside pinned ones, or that the scanner
// flagged, with the diff or the findings and how to approve it, under the
// default security.scan (hold-high).
func (s *Store) Diagnostics() []provider.Diagnostic { return s.DiagnosticsWith(scan.Default) }

// DiagnosticsWith is Diagnostics under security.scan mode m (what its
// findings hold back is m.Holding's decision, as in ObserveBatch).
func (s *Store) DiagnosticsWith(m scan.Mode) []provider.Diagnostic {
	var out []provider.Diagnostic
	mode := s.Mode()
	for _, r := range s.Attention() {
		var what string
		held := false
		fs := r.Findings
		if r.Changed != nil {
			fs = r.Changed.Findings
		}
		flaggedHeld := m.Holds(fs) && (r.Changed != nil || !r.Approved)
		switch r.Status() {
		case "new":
			held = mode == Quarantine
			what = "new since its provider's tools were pinned"
		case "changed":
			held = mode == Quarantine
			what = "changed since it was pinned"
		case "suspicious":
			what = "flagged by the definition scanner"
		}
		held = held || flaggedHeld || r.Status() == "suspicious" && r.Digest == "" && !r.New
		setting := "security.pin: " + string(mode)
		if r.Status() == "suspicious" || flaggedHeld {
			setting = m.Setting()
		}
		if held {
			what = "quarantined: " + what + " (" + setting + ")"
		} else {
			what += " (" + setting + ", still callable)"
		}
		reason := what
		if r.Changed != nil {
			if d := Diff(r.Def, r.Changed.Def); d != "" && r.Status() == "changed" {
				reason += ": " + d
			}
		}
		if len(fs) > 0 {
			reason += "; scanner: " + scan.Summary(fs)
		}
		out = append(out, provider.Diagnostic{Provider: r.Provider, Item: r.Tool, Status: "warning",
			Reason: reason + "; approve with `agent-tools pins approve " + r.Tool + "` or in the console"})
	}
	return out
}

// HeldFindings are the scanner's findings that hold tool back under m: on
// the definition waiting for approval, else on the pinned one unless a
// person approved it (none: the scanner holds nothing of it).
func (s *Store) HeldFindings(tool string, m scan.Mode) []scan.Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lazy != nil {
		if h, ok := s.lazy[tool]; ok {
			if h.rec == nil || h.flags&flagApproved != 0 {
				return nil
			}
			return m.Holding(h.rec.Findings)
		}
	}
	r, ok := s.recs[tool]
	if !ok {
		return nil
	}
	if r.Changed != nil {
		return m.Holding(r.Changed.Findings)
	}
	if r.Approved {
		return nil
	}
	return m.Holding(r.Findings)
}
