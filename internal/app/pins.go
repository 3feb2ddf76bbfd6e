package app

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pins"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/scan"
)

// scanMode is security.scan in force (validated by the config; unset is
// scan.Default, hold-high).
func scanMode(cfg *config.Config) scan.Mode { return cfg.Security.ScanMode() }

// pinState is the pin store, which outlives reloads (a reload must not
// forget what was pinned), and the audit log of the live generation that
// pin changes are written to.
type pinState struct {
	once  sync.Once
	store *pins.Store
	// entries are the approvals of registry entries (held.go), beside
	// the pins file or in the shared state.
	entries *pins.Entries
	stop    context.CancelFunc // ends the store's watcher (shared state only)
	mu      sync.Mutex
	audit   io.Writer
}

// close ends the pin store's watcher, if any.
func (p *pinState) close() {
	if p.stop != nil {
		p.stop()
	}
}

// openPins opens the pin store on the first build (next to the decisions
// file; in memory for an embedder without one; in the shared store with
// Redis) and points pin changes at this generation's audit log.
func (a *App) openPins(cfg *config.Config, audit io.Writer) *pins.Store {
	mode, _ := pins.ParseMode(cfg.Security.Pin) // validated by the config
	p := &a.pins
	p.once.Do(func() {
		path, index := "", ""
		if d, ok := a.opts.Decisions.(interface{ Path() string }); ok {
			env := a.opts.Env
			if env == nil {
				env = os.LookupEnv
			}
			path = pins.PathFor(d.Path(), cfg.Path != "", env)
			index = pins.IndexPath(path, env)
		}
		s, err := pins.OpenIndexed(path, index, mode, a.log)
		if err != nil {
			a.log.Warn("pins", "err", err)
		}
		p.entries = pins.OpenEntries(pins.EntriesPath(path))
		if a.shared != nil && a.shared.Redis != nil {
			s.Share(a.shared.Signed)
			p.entries.Share(a.shared.Signed) // a grant: signed with the cluster key, as pins are
			// The shared record is re-read in the background: an approval on
			// another replica reaches this one within a second, and no call
			// waits for a Redis GET under the store's lock.
			ctx, cancel := context.WithCancel(context.Background())
			s.SetOnApproved(func() {
				// Re-admit what the approval released and tell this
				// replica's sessions (list_changed), as the replica that
				// approved did for its own.
				if g := a.current(); g != nil {
					g.reg.Refresh(ctx)
				}
			})
			s.Watch(ctx, time.Second)
			p.stop = cancel
		}
		s.OnChange(p.record)
		p.store = s
	})
	p.store.SetMode(mode)
	var held []string
	for _, pc := range cfg.Providers {
		if pc.Pin == "quarantine" {
			held = append(held, pc.ID)
		}
	}
	p.store.SetQuarantined(held)
	p.mu.Lock()
	p.audit = audit
	p.mu.Unlock()
	return p.store
}

// pinAudit is the audit line of a changed definition, a new tool beside
// pinned ones, or a definition the scanner flagged.
type pinAudit struct {
	Time     time.Time      `json:"time"`
	Event    string         `json:"event"` // pin_changed | pin_new | scan_finding
	Tool     string         `json:"tool"`
	Provider string         `json:"provider"`
	Decision string         `json:"decision"` // the pin mode: warn | quarantine
	Held     bool           `json:"held,omitempty"`
	Pinned   string         `json:"pinned_sha256,omitempty"`
	Now      string         `json:"definition_sha256"`
	Diff     string         `json:"diff,omitempty"`
	Findings []scan.Finding `json:"findings,omitempty"`
}

func (p *pinState) record(c pins.Change) {
	p.mu.Lock()
	w := p.audit
	p.mu.Unlock()
	if w == nil {
		return
	}
	a := pinAudit{Time: time.Now().UTC(), Event: c.Event, Tool: c.Tool, Provider: c.Provider,
		Decision: string(c.Mode), Held: c.Held, Pinned: c.Digest, Now: c.Digest, Findings: c.Findings}
	if a.Event == "" {
		a.Event = "pin_changed"
	}
	if c.Changed != nil {
		a.Now, a.Findings = c.Changed.Digest, c.Changed.Findings
		if c.Digest != "" {
			a.Diff = pins.Diff(c.Def, c.Changed.Def)
		}
	}
	if a.Pinned == a.Now {
		a.Pinned = ""
	}
	line, err := json.Marshal(a)
	if err == nil {
		// A definition is an upstream's text: it is scrubbed of known secrets
		// like everything else written out. One whole line per write, as
		// the audit stage does.
		_, _ = w.Write(append(redact.Default.Bytes(line), '\n'))
	}
}

// Pins is the pin store (nil before the first build).
func (a *App) Pins() *pins.Store { return a.pins.store }

// ApprovePin makes tool's changed definition its pin and brings a held
// tool back into the catalog at once; with server.redis every replica
// re-reads the pins at once too (cluster.go) and tells its own sessions.
//
// A provider id whose registry entry waits for approval (held.go) is
// approved as ApproveEntry does: the console's approval reaches it too.
func (a *App) ApprovePin(ctx context.Context, tool string) (pins.Record, error) {
	if _, held := a.current().held[tool]; held {
		h, err := a.ApproveEntry(ctx, tool)
		if err != nil {
			return pins.Record{}, err
		}
		return approvedPin(h), nil
	}
	r, err := a.pins.store.Approve(tool)
	if err != nil {
		return r, err
	}
	a.Registry().Refresh(ctx)
	a.share("pin", r.Provider, func(c *cluster.Changes) error { return c.Bump(ctx) })
	return r, nil
}
