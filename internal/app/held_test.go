package app_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/status"
)

// TestRegistryQuarantineHeldInTheRuntime (issue 44, item 6): a registry
// entry under pin: quarantine is not built: its command never runs, it is
// listed disabled with why, enabling it is refused with the same words,
// and the console's approval (ApprovePin with the provider's id) starts
// it. Without the marker comment, or without pin: quarantine, nothing is
// held.
func TestRegistryQuarantineHeldInTheRuntime(t *testing.T) {
	p := newProject(t)
	marker := filepath.Join(p.dir, "ran")
	entry := func(id, comment, pin string) string {
		return comment + "  - id: " + id + "\n    kind: mcp\n    command: sh\n    args: [-c, 'echo " + id + " >> " + marker + "; exit 1']\n" + pin
	}
	p.file(t, "agent-tools.yaml", "local: {enabled: false}\nproviders:\n"+
		entry("held", "  # registry: com.example.test/held@1.0.0 (npm) from https://registry.example\n", "    pin: quarantine\n")+
		entry("nopin", "  # registry: com.example.test/nopin@1.0.0 (npm) from https://registry.example\n", "")+
		entry("handwritten", "", "    pin: quarantine\n"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, app.Options{ProjectDir: p.dir, AuditDefault: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ran := func(id string) bool {
		data, _ := os.ReadFile(marker)
		return strings.Contains(string(data), id+"\n")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !(ran("nopin") && ran("handwritten")) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !ran("nopin") || !ran("handwritten") {
		t.Fatal("a provider that is not a quarantined registry entry was held")
	}
	if ran("held") {
		t.Fatal("the quarantined registry entry ran before its approval")
	}
	held := a.HeldEntries()
	if len(held) != 1 || held[0].Provider != "held" || held[0].Name != "com.example.test/held" || len(held[0].Digest) != 64 {
		t.Fatalf("held: %+v", held)
	}
	var st status.ProviderState
	for _, ps := range a.Status().Providers {
		if ps.ID == "held" {
			st = ps
		}
	}
	if st.State != status.StateDisabled || !strings.Contains(st.Reason, "agent-tools registry approve held") {
		t.Errorf("status: %+v", st)
	}
	var ue *app.UnavailableError
	if err := a.SetEnabled(ctx, "held", true); !errors.As(err, &ue) || !strings.Contains(err.Error(), "not approved yet") {
		t.Errorf("enabling a held entry: %v", err)
	}
	if ran("held") {
		t.Fatal("enabling it ran it")
	}
	rec, err := a.ApprovePin(ctx, "held") // the console's approve button
	if err != nil || rec.Provider != "held" {
		t.Fatalf("ApprovePin(held): %+v %v", rec, err)
	}
	for !ran("held") && time.Now().Before(deadline.Add(5*time.Second)) {
		time.Sleep(20 * time.Millisecond)
	}
	if !ran("held") {
		t.Fatal("approved, the entry did not start")
	}
	if len(a.HeldEntries()) != 0 {
		t.Errorf("still held: %+v", a.HeldEntries())
	}
	if _, err := a.ApproveEntry(ctx, "held"); !errors.Is(err, app.ErrNotHeld) {
		t.Errorf("approving it again: %v", err)
	}
}
