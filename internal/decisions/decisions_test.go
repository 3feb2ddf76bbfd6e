package decisions

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
)

var (
	wipe      = catalog.Tool{Provider: "gh", Name: "wipe", Canonical: "gh_wipe"}
	otherWipe = catalog.Tool{Provider: "gh2", Name: "wipe", Canonical: "gh_wipe"} // same name, another provider
)

// in is token:alice's scope in session.
func in(session string) pipeline.DecisionScope {
	return pipeline.DecisionScope{Identity: "token:alice", Session: session}
}

func TestParseRejectsMalformed(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", "not a decisions file"},
		{"not json", "always allow gh_wipe", "not a decisions file"},
		{"array", `[]`, "not a decisions file"},
		{"unknown field", `{"version":1,"decisions":[],"x":1}`, "unknown field"},
		{"wrong version", `{"version":3,"decisions":[]}`, "version 3"},
		{"no version", `{"decisions":[]}`, "version 0"},
		{"empty tool", `{"version":1,"decisions":[{"tool":"","provider":"gh"}]}`, "required"},
		{"no provider", `{"version":1,"decisions":[{"tool":"gh_wipe"}]}`, "required"},
		{"trailing", `{"version":1,"decisions":[]} {}`, "trailing"},
		{"bad time", `{"version":1,"decisions":[{"tool":"a","provider":"b","time":"yesterday"}]}`, "not a decisions file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":1,"decisions":[{"tool":"gh_wipe","provider":"gh","time":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":2,"decisions":[{"tool":"gh_wipe","provider":"gh","identity":"token:alice","digest":"ab"}]}`))
	f.Add([]byte(`{"version":1,"decisions":[{"tool":"gh_wipe","provider":"gh","identity":"token:alice"}]}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		recs, err := Parse(data)
		if err == nil {
			var v struct{ Version int }
			_ = json.Unmarshal(data, &v)
			for _, r := range recs {
				if r.Tool == "" || r.Provider == "" {
					t.Fatalf("accepted an empty record: %+v", r)
				}
				if v.Version == 1 && r.Identity != "" {
					t.Fatalf("a version 1 record has an identity (it was made for every caller): %+v", r)
				}
			}
		}
	})
}

func TestAlwaysIsKeptByCanonicalNameAndProvider(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Allowed(wipe, in("s1")) {
		t.Fatal("nothing decided yet")
	}
	s.Remember(wipe, in("s1"), policy.ApprovedOnce)
	if s.Allowed(wipe, in("s1")) {
		t.Fatal("once is not remembered")
	}
	s.Remember(wipe, in("s1"), policy.ApprovedAlways)
	reopened, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tool catalog.Tool
		want bool
	}{
		{"same name, same provider, another session", wipe, true},
		{"same name from another provider is stale", otherWipe, false},
		{"the original name is not a key", catalog.Tool{Provider: "gh", Name: "wipe", Canonical: "wipe"}, false},
		{"no canonical name", catalog.Tool{Provider: "gh", Name: "wipe"}, false},
	} {
		if got := reopened.Allowed(tc.tool, in("s2")); got != tc.want {
			t.Errorf("%s: Allowed = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := Classify(reopened.List()[0], "gh2"); got != Stale {
		t.Errorf("Classify with another owner = %s", got)
	}
	if got := Classify(reopened.List()[0], ""); got != Stale {
		t.Errorf("Classify with no owner = %s", got)
	}
	if got := Classify(reopened.List()[0], "gh"); got != Active {
		t.Errorf("Classify with the same owner = %s", got)
	}
}

func TestSessionScope(t *testing.T) {
	s, _ := Open("", nil)
	s.Remember(wipe, in("s1"), policy.ApprovedForSession)
	if !s.Allowed(wipe, in("s1")) || s.Allowed(wipe, in("s2")) || s.Allowed(otherWipe, in("s1")) {
		t.Fatal("a session decision holds for that session and that provider only")
	}
	if len(s.List()) != 0 {
		t.Fatal("session decisions are not persisted")
	}
}

// A revoke from another process (the CLI) applies to a running store.
func TestAnotherProcessRevokes(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	server, _ := Open(path, nil)
	server.Remember(wipe, in("s"), policy.ApprovedAlways)
	cli, _ := Open(path, nil)
	// The modification time may not change within the file system's
	// granularity; the size does (the file becomes an empty list).
	if found, err := cli.Revoke("gh_wipe"); !found || err != nil {
		t.Fatalf("revoke: %v %v", found, err)
	}
	if server.Allowed(wipe, in("s")) {
		t.Fatal("the server still applies a revoked decision")
	}
	if found, _ := cli.Revoke("gh_wipe"); found {
		t.Fatal("revoked twice")
	}
}

func TestCorruptFileStartsEmptyAndIsKeptAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, nil)
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "decisions clear") {
		t.Fatalf("err = %v", err)
	}
	if s == nil || s.Allowed(wipe, in("s")) || len(s.List()) != 0 {
		t.Fatal("a corrupt store must give a usable empty store")
	}
	s.Remember(wipe, in("s"), policy.ApprovedAlways)
	if b, _ := os.ReadFile(path + ".corrupt"); string(b) != "{not json" {
		t.Fatalf("the unreadable file must be kept aside, got %q", b)
	}
	again, err := Open(path, nil)
	if err != nil || !again.Allowed(wipe, in("x")) {
		t.Fatalf("after the write: %v", err)
	}
	if err := again.Clear(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("clear removes the file")
	}
}

func TestWriteIsAtomicAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(filepath.Join(dir, FileName), nil)
	s.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	s.Remember(wipe, in("s"), policy.ApprovedAlways)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != FileName {
		t.Fatalf("dir holds %v", entries)
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	want := "{\n  \"version\": 2,\n  \"decisions\": [\n    {\n      \"tool\": \"gh_wipe\",\n      \"provider\": \"gh\",\n      \"identity\": \"token:alice\",\n      \"time\": \"2026-01-02T03:04:05Z\"\n    }\n  ]\n}\n"
	if string(b) != want {
		t.Fatalf("file:\n%s", b)
	}
}
