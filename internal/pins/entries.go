package pins

// Entry approvals: a provider `agent-tools registry add` wrote, with
// pin: quarantine, is not built or started (no process, no connection)
// until a person approves what it runs: its registry name, version and
// the digest of its command, args, env, url and headers as the config
// writes them (config.RegistryEntry). A changed entry has another digest
// and waits again. Approvals live beside the pins file, or in the shared
// state with server.redis (docs/registry.md).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/state"
)

// EntriesFileName is the approvals file beside a project's own pins file.
const EntriesFileName = "agent-tools.entries.json"

// entriesKey holds the approvals in the shared state.
const entriesKey = "registry-approvals:v1"

// EntryApproval is one approved registry entry.
type EntryApproval struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
	// Provider is the id the entry had when it was approved (shown only:
	// the approval holds for the entry whatever its id).
	Provider string    `json:"provider,omitempty"`
	Time     time.Time `json:"time"`
}

func (a EntryApproval) same(b EntryApproval) bool {
	return a.Name == b.Name && a.Version == b.Version && a.Digest == b.Digest
}

type entriesFile struct {
	Version   int             `json:"version"`
	Approvals []EntryApproval `json:"approvals"`
}

// Entries are the approvals of registry entries. Path "" and no shared
// state keeps them in memory.
type Entries struct {
	path   string
	shared state.Store
	mu     sync.Mutex
	mem    []EntryApproval
}

// EntriesPath is where the approvals live beside the pins file at
// pinsPath ("" for pins in memory).
func EntriesPath(pinsPath string) string {
	if pinsPath == "" {
		return ""
	}
	if filepath.Base(pinsPath) == FileName {
		return filepath.Join(filepath.Dir(pinsPath), EntriesFileName)
	}
	return strings.TrimSuffix(pinsPath, ".json") + ".entries.json"
}

// OpenEntries opens the approvals at path (read on each use: another
// process approves too).
func OpenEntries(path string) *Entries { return &Entries{path: path} }

// Share keeps the approvals in the shared state (server.redis).
func (e *Entries) Share(st state.Store) {
	e.mu.Lock()
	e.shared = st
	e.mu.Unlock()
}

// Path is the approvals file ("" in memory or shared).
func (e *Entries) Path() string {
	if e == nil || e.shared != nil {
		return ""
	}
	return e.path
}

// List reads every approval. A file or record that cannot be read is an
// error: nothing in it is trusted.
func (e *Entries) List() ([]EntryApproval, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.readLocked()
}

func (e *Entries) readLocked() ([]EntryApproval, error) {
	var data []byte
	var err error
	switch {
	case e.shared != nil:
		ctx, cancel := context.WithTimeout(context.Background(), 2*state.OpTimeout)
		data, err = e.shared.Get(ctx, entriesKey)
		cancel()
		if errors.Is(err, state.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("registry approvals: reading shared state: %w", err)
		}
	case e.path != "":
		data, err = os.ReadFile(e.path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("registry approvals: %w", err)
		}
	default:
		return slices.Clone(e.mem), nil
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("registry approvals %s: larger than %d bytes", e.where(), maxFile)
	}
	var f entriesFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("registry approvals %s: %w (fix or remove it; nothing in it is trusted)", e.where(), err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("registry approvals %s: version %d is not 1", e.where(), f.Version)
	}
	return f.Approvals, nil
}

func (e *Entries) where() string {
	if e.shared != nil {
		return "(shared state)"
	}
	return e.path
}

// Approved says whether a person approved the entry name@version with
// this digest.
func (e *Entries) Approved(name, version, digest string) (bool, error) {
	if e == nil {
		return false, nil
	}
	as, err := e.List()
	if err != nil {
		return false, err
	}
	want := EntryApproval{Name: name, Version: version, Digest: digest}
	return slices.ContainsFunc(as, want.same), nil
}

// Approve records a. An approval already there is kept as it was.
func (e *Entries) Approve(a EntryApproval) error {
	if a.Name == "" || a.Version == "" || len(a.Digest) != 64 {
		return errors.New("registry approvals: an approval needs the entry's name, version and digest")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	as, err := e.readLocked()
	if err != nil {
		return err
	}
	if slices.ContainsFunc(as, a.same) {
		return nil
	}
	if a.Time.IsZero() {
		a.Time = time.Now().UTC().Truncate(time.Second)
	}
	as = append(as, a)
	data, err := json.MarshalIndent(entriesFile{Version: 1, Approvals: as}, "", "  ")
	if err != nil {
		return err
	}
	switch {
	case e.shared != nil:
		ctx, cancel := context.WithTimeout(context.Background(), 2*state.OpTimeout)
		defer cancel()
		if err := e.shared.Put(ctx, entriesKey, data, 0); err != nil {
			return fmt.Errorf("registry approvals: writing shared state: %w", err)
		}
	case e.path != "":
		if err := writeAtomic(e.path, append(data, '\n')); err != nil {
			return fmt.Errorf("registry approvals: %w", err)
		}
	default:
		e.mem = as
	}
	return nil
}
