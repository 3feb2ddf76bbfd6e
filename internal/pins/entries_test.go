package pins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/state"
)

// Registry entry approvals (issue 44, item 6): keyed by name, version and
// digest; beside the pins file; an unreadable file approves nothing.
func TestEntryApprovals(t *testing.T) {
	dir := t.TempDir()
	if got := EntriesPath(filepath.Join(dir, FileName)); got != filepath.Join(dir, EntriesFileName) {
		t.Errorf("beside a project's pins file: %s", got)
	}
	if got := EntriesPath(filepath.Join(dir, "pins", "proj-0123456789ab.json")); got != filepath.Join(dir, "pins", "proj-0123456789ab.entries.json") {
		t.Errorf("in the state directory: %s", got)
	}
	d1, d2 := strings.Repeat("a", 64), strings.Repeat("b", 64)
	for name, e := range map[string]*Entries{
		"file":   OpenEntries(filepath.Join(dir, "pins", "p.entries.json")),
		"memory": OpenEntries(""),
		"shared": func() *Entries {
			e := OpenEntries(filepath.Join(dir, "unused.json"))
			e.Share(state.NewMemory())
			return e
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			if ok, err := e.Approved("a.b/c", "1.0.0", d1); ok || err != nil {
				t.Fatalf("approved before: %v %v", ok, err)
			}
			if err := e.Approve(EntryApproval{Name: "a.b/c", Version: "1.0.0", Digest: d1, Provider: "c"}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				version, digest string
				want            bool
			}{{"1.0.0", d1, true}, {"1.0.1", d1, false}, {"1.0.0", d2, false}} {
				if ok, err := e.Approved("a.b/c", c.version, c.digest); ok != c.want || err != nil {
					t.Errorf("%s %s: %v %v", c.version, c.digest[:1], ok, err)
				}
			}
			if err := e.Approve(EntryApproval{Name: "a.b/c", Version: "1.0.0", Digest: "short"}); err == nil {
				t.Error("an approval without a digest was stored")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "unused.json")); err == nil {
		t.Error("shared approvals were written to the file")
	}
	bad := filepath.Join(dir, "bad.entries.json")
	if err := os.WriteFile(bad, []byte(`{"version":1,"approvals":[{"name":"a.b/c","version":"1.0.0","digest":"`+d1+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := OpenEntries(bad)
	if ok, err := e.Approved("a.b/c", "1.0.0", d1); ok || err == nil {
		t.Errorf("a truncated file approved: %v %v", ok, err)
	}
	if err := e.Approve(EntryApproval{Name: "a.b/c", Version: "1.0.0", Digest: d2}); err == nil {
		t.Error("an approval overwrote an unreadable file")
	}
	var nilEntries *Entries
	if ok, _ := nilEntries.Approved("a.b/c", "1.0.0", d1); ok {
		t.Error("no store approved")
	}
}
