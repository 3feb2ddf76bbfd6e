package app

// Registry entries held until approved (docs/registry.md). A provider that
// `agent-tools registry add` wrote (its marker comment, config.RegistryEntry)
// and that keeps pin: quarantine is not built at all: no process starts, no
// connection opens, nothing of its spec is resolved, in list, call, serve
// and doctor alike, because every one of them builds providers here. It
// is listed as disabled with why; enabling it is refused with the same
// words. Once a person approves its name, version and digest (registry
// approve, pins approve ID, the console's pin approval, ApproveEntry) the
// next build starts it: at once in this process, on a serve's watcher
// seeing the approvals file change, on another replica's change.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pins"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/status"
)

// HeldEntry is a registry entry waiting for approval (its type is in
// status, which the console reads without importing the app).
type HeldEntry = status.HeldEntry

// ApproveCommand is the command that approves a held entry.
func ApproveCommand(id string) string { return "agent-tools registry approve " + id }

// EntryHeld says whether pc is a registry entry under pin: quarantine
// that entries has no approval for, and why (fail closed: approvals that
// cannot be read hold it too).
func EntryHeld(pc config.Provider, entries *pins.Entries) (bool, string) {
	m := pc.Registry
	if m == nil || pc.Pin != "quarantine" {
		return false, ""
	}
	ok, err := entries.Approved(m.Name, m.Version, m.Digest)
	if ok {
		return false, ""
	}
	why := fmt.Sprintf("held: added from a registry (%s@%s) with pin: quarantine, and what it runs is not approved yet, so it was not started (no process, no connection); read its entry in the config, then approve it with `%s`",
		m.Name, m.Version, ApproveCommand(pc.ID))
	if err != nil {
		why += " (the approvals cannot be read: " + err.Error() + ")"
	}
	return true, why
}

// holdEntry checks pc before it is built; true: it is held (recorded).
func (a *App) holdEntry(g *generation, pc config.Provider) bool {
	held, why := EntryHeld(pc, a.pins.entries)
	if !held {
		return false
	}
	m := pc.Registry
	g.held[pc.ID] = HeldEntry{Provider: pc.ID, Name: m.Name, Version: m.Version, Digest: m.Digest, Reason: why}
	g.unavailable[pc.ID] = why
	g.loadErrors = append(g.loadErrors, provider.Diagnostic{Provider: pc.ID, Status: "held", Reason: why})
	g.log.Warn("provider held until its registry entry is approved", "provider", pc.ID, "entry", m.Name+"@"+m.Version,
		"approve", ApproveCommand(pc.ID))
	// The approvals file's directory exists, so that serve's watcher sees
	// an approval made by another process (watch.go).
	if p := a.pins.entries.Path(); p != "" {
		_ = os.MkdirAll(filepath.Dir(p), 0o700)
	}
	return true
}

// HeldEntries are the live configuration's registry entries waiting for
// approval, by provider id.
func (a *App) HeldEntries() []HeldEntry {
	g := a.current()
	var out []HeldEntry
	for _, id := range slices.Sorted(maps.Keys(g.held)) {
		out = append(out, g.held[id])
	}
	return out
}

// ErrNotHeld: the id names no registry entry waiting for approval.
var ErrNotHeld = errors.New("no registry entry waits for approval under that id")

// ApproveEntry approves the held registry entry of provider id, as it is
// in the live configuration, and rebuilds, which starts it; with
// server.redis every replica is told.
func (a *App) ApproveEntry(ctx context.Context, id string) (HeldEntry, error) {
	h, ok := a.current().held[id]
	if !ok {
		return HeldEntry{}, fmt.Errorf("%q: %w", id, ErrNotHeld)
	}
	if err := a.pins.entries.Approve(pins.EntryApproval{Name: h.Name, Version: h.Version, Digest: h.Digest, Provider: id}); err != nil {
		return h, err
	}
	a.log.Info("registry entry approved", "provider", id, "entry", h.Name+"@"+h.Version, "digest", h.Digest)
	a.share("entry", id, func(c *cluster.Changes) error { return c.Bump(ctx) })
	return h, a.Reload(ctx)
}

// recheckHeld rebuilds when an entry held by the live configuration has
// been approved since (by another process or replica).
func (a *App) recheckHeld(ctx context.Context) bool {
	g := a.current()
	for id, h := range g.held {
		if ok, _ := a.pins.entries.Approved(h.Name, h.Version, h.Digest); ok {
			a.log.Info("registry entry approved elsewhere; starting it", "provider", id)
			_ = a.Reload(ctx) // Reload logs its own failure
			return true
		}
	}
	return false
}

// approvedPin is the pins record an entry approval answers ApprovePin with.
func approvedPin(h HeldEntry) pins.Record {
	return pins.Record{Tool: h.Provider, Provider: h.Provider, Digest: h.Digest, Approved: true, Time: time.Now().UTC().Truncate(time.Second)}
}
