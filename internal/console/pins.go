package console

import (
	"context"
	"errors"
	"net/http"

	"github.com/agent-tools/agent-tools/internal/pins"
	"github.com/agent-tools/agent-tools/internal/scan"
	"github.com/agent-tools/agent-tools/internal/status"
)

// pinRuntime is what the pins view needs (docs/pins.md); a runtime without a
// pin store shows an empty view.
type pinRuntime interface {
	Pins() *pins.Store
	ApprovePin(ctx context.Context, tool string) (pins.Record, error)
}

// heldEntries is what the pins view needs to show registry entries that
// wait for approval (docs/registry.md): approving one is the same button,
// POST /ui/api/pins/{provider id}/approve (the runtime's ApprovePin knows a
// held entry's id).
type heldEntries interface {
	HeldEntries() []status.HeldEntry
}

// entryRows are the registry entries waiting for approval ([] for none).
func (c *Console) entryRows() []status.HeldEntry {
	h, ok := c.rt.(heldEntries)
	if !ok {
		return []status.HeldEntry{}
	}
	if rows := h.HeldEntries(); rows != nil {
		return rows
	}
	return []status.HeldEntry{}
}

// pinRow is one pin as the view and its API show it.
type pinRow struct {
	pins.Record
	Status string `json:"status"` // pinned | changed | new | suspicious
	// Diff is the one-line summary; Changes the field-by-field, line-level
	// diff (canonical JSON), which the page shows line by line.
	Diff    string             `json:"diff,omitempty"`
	Changes []pins.FieldChange `json:"changes,omitempty"`
	// Held: the tool is in no listing, search or call until approved;
	// HeldWhy is the error a call to it gets (the findings that hold it
	// named by severity, rule and field).
	Held    bool   `json:"held,omitempty"`
	HeldWhy string `json:"heldWhy,omitempty"`
	// Approve is the command that approves it (the console's button does
	// the same).
	Approve string `json:"approve,omitempty"`
}

// Flagged are the scanner's findings on the definition waiting for approval
// (or on the pinned one).
func (p pinRow) Flagged() []scan.Finding {
	if p.Changed != nil {
		return p.Changed.Findings
	}
	return p.Findings
}

func (c *Console) pinRows() (mode string, rows []pinRow) {
	pr, ok := c.rt.(pinRuntime)
	if !ok || pr.Pins() == nil {
		return "", []pinRow{}
	}
	rows = []pinRow{}
	for _, r := range pr.Pins().List() {
		row := pinRow{Record: r, Status: r.Status()}
		if row.Status != "pinned" {
			row.Approve = "agent-tools pins approve " + r.Tool
		}
		if reg := c.rt.Registry(); reg != nil {
			if _, held := reg.Held(r.Tool); held {
				row.Held = true
				if e := reg.HeldError(r.Tool); e != nil {
					row.HeldWhy = e.Message
				}
			}
		}
		if r.Changed != nil {
			row.Changes = pins.Changes(r.Def, r.Changed.Def)
			if r.Digest != "" {
				row.Diff = pins.Diff(r.Def, r.Changed.Def)
			}
		}
		rows = append(rows, row)
	}
	return string(pr.Pins().Mode()), rows
}

// scanSetting is how the pins view names security.scan in force.
func (c *Console) scanSetting() string {
	if reg := c.rt.Registry(); reg != nil {
		return reg.ScanMode().Setting()
	}
	return ""
}

// pinsPage is GET /ui/pins: changed definitions first, with their diff
// and an approve button.
func (c *Console) pinsPage(w http.ResponseWriter, r *http.Request) {
	mode, rows := c.pinRows()
	var changed, pinned []pinRow
	for _, p := range rows {
		if p.Status != "pinned" {
			changed = append(changed, p)
		} else {
			pinned = append(pinned, p)
		}
	}
	c.render(w, http.StatusOK, "pins", c.view(r, "Pins", "pins", map[string]any{"Mode": mode, "Scan": c.scanSetting(), "Entries": c.entryRows(), "Changed": changed, "Pinned": pinned}))
}

// apiPins is GET /ui/api/pins.
func (c *Console) apiPins(w http.ResponseWriter, r *http.Request) {
	mode, rows := c.pinRows()
	writeJSON(w, http.StatusOK, map[string]any{"mode": mode, "scan": c.scanSetting(), "entries": c.entryRows(), "pins": rows})
}

// apiApprovePin is POST /ui/api/pins/{tool}/approve: the tool's changed
// definition becomes its pin; a quarantined tool is served again at once.
func (c *Console) apiApprovePin(w http.ResponseWriter, r *http.Request) {
	pr, ok := c.rt.(pinRuntime)
	if !ok || pr.Pins() == nil {
		writeJSON(w, http.StatusNotFound, errBody("no_pins", "this runtime keeps no pins"))
		return
	}
	tool := r.PathValue("tool")
	rec, err := pr.ApprovePin(r.Context(), tool)
	switch {
	case errors.Is(err, pins.ErrNoChange):
		writeJSON(w, http.StatusConflict, errBody("no_change", err.Error()))
		return
	case err != nil:
		writeJSON(w, http.StatusNotFound, errBody("approve_pin", err.Error()))
		return
	}
	c.log.Info("console approved a changed tool definition", "user", callerOf(r.Context()).user, "tool", tool, "digest", rec.Digest)
	writeJSON(w, http.StatusOK, pinRow{Record: rec, Status: "pinned"})
}
