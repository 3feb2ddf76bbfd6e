package status

import (
	"testing"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// ForModel writes the paths of the user's files as the places they are
// under, whole names only, and leaves Status itself as it was.
func TestForModelHidesPaths(t *testing.T) {
	s := Status{Config: "/home/u/proj/agent-tools.yaml", ProjectDir: "/home/u/proj",
		Providers: []ProviderState{{ID: "p", Error: "open /home/u/proj/x.json: denied", LastError: "/home/u/other/y and /home/u/project2/z"}},
		Problems:  []provider.Diagnostic{{Item: "/home/u/proj", Reason: "see /home/u/proj/agent-tools.yaml. Or /etc/x; not /data/home/u/proj"}}}
	m := s.ForModel("/home/u")
	for _, tt := range []struct{ got, want string }{
		{m.Config + m.ProjectDir, ""},
		{m.Providers[0].Error, "open <project>/x.json: denied"},
		{m.Providers[0].LastError, "~/other/y and ~/project2/z"},
		{m.Problems[0].Item, "<project>"},
		{m.Problems[0].Reason, "see <config>. Or /etc/x; not /data/home/u/proj"},
		{s.Providers[0].Error + s.Problems[0].Item, "open /home/u/proj/x.json: denied/home/u/proj"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	if m := (Status{ProjectDir: "/"}).ForModel("/"); m.ProjectDir != "" {
		t.Errorf("%+v", m)
	}
}
