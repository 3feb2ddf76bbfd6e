package console_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/console"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/status"
)

// callTool runs a tool through POST /ui/api/call and decodes the result.
func (f *fixture) callTool(cookie, csrf, tool string) console.CallResult {
	f.t.Helper()
	res := f.do("POST", "/ui/api/call", `{"tool":"`+tool+`"}`, "Cookie", cookie, console.CSRFHeader, csrf, "Content-Type", "application/json")
	var out console.CallResult
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		f.t.Fatalf("call %s: %d %v", tool, res.StatusCode, err)
	}
	return out
}

// POST /ui/api/providers/{id}/restart: the same login and CSRF rules as
// the other mutations; a real stdio upstream gets a new process, its
// restart count and state are in the answer and in the status; what cannot
// be restarted says why with 404 or 409.
func TestRestartAPI(t *testing.T) {
	f := newFixtureWith(t, upstreamConfig(t), nil)
	cookie, csrf := f.login()
	pid := f.callTool(cookie, csrf, "up_pid")
	if pid.IsError || pid.Text == "" {
		t.Fatalf("up_pid: %+v", pid)
	}
	if res := f.do("POST", "/ui/api/providers/up/restart", "", "Cookie", cookie); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a restart without the CSRF token: %d, want 403", res.StatusCode)
	}
	res := f.do("POST", "/ui/api/providers/up/restart", "", "Cookie", cookie, console.CSRFHeader, csrf)
	var st status.ProviderState
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("restart: %d %v", res.StatusCode, err)
	}
	if st.ID != "up" || st.State != status.StateReady || st.Restarts != 1 || !st.Restartable {
		t.Fatalf("after the restart: %+v", st)
	}
	if again := f.callTool(cookie, csrf, "up_pid"); again.IsError || again.Text == pid.Text {
		t.Errorf("after the restart the call ran on pid %s (was %s)", again.Text, pid.Text)
	}
	page := readAll(t, f.do("GET", "/ui/", "", "Cookie", cookie))
	if !strings.Contains(page, `class="restart" data-provider="up"`) || strings.Contains(page, `class="restart" data-provider="demo"`) {
		t.Errorf("the Restart button should be offered for up only:\n%s", page)
	}

	if err := f.app.SetEnabled(t.Context(), "up", false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   string
		want int
	}{{"nope", http.StatusNotFound}, {"demo", http.StatusConflict}, {"up", http.StatusConflict}} {
		res := f.do("POST", "/ui/api/providers/"+c.id+"/restart", "", "Cookie", cookie, console.CSRFHeader, csrf)
		if body := readAll(t, res); res.StatusCode != c.want || !strings.Contains(body, `"error": "restart"`) {
			t.Errorf("restart %s: %d %s, want %d", c.id, res.StatusCode, body, c.want)
		}
	}
}

// GET /ui/api/activity: the window over the runtime's metrics, one point
// per sample, per provider with calls.
func TestActivityAPI(t *testing.T) {
	f := newFixture(t)
	cookie, csrf := f.login()
	var a metrics.Activity
	get := func() {
		t.Helper()
		res := f.do("GET", "/ui/api/activity", "", "Cookie", cookie)
		a = metrics.Activity{}
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("activity: %d %v", res.StatusCode, err)
		}
	}
	get()
	if len(a.Providers) != 0 || a.StepSeconds != 10 {
		t.Fatalf("before any sample: %+v", a)
	}
	// greet without its required name: INVALID_ARGUMENTS, an error each time.
	f.callTool(cookie, csrf, f.canonical("greet"))
	f.callTool(cookie, csrf, f.canonical("greet"))
	// The step in progress shows before it ends: a trailing partial point.
	get()
	if len(a.Providers) != 1 || len(a.Providers[0].Points) != 1 || !a.Providers[0].Points[0].Partial || a.Providers[0].Points[0].Calls != 2 {
		t.Fatalf("two calls, before the step ends: %+v", a)
	}
	if err := f.win.Sample(time.Now()); err != nil {
		t.Fatal(err)
	}
	get()
	// One sampled point, then the (empty) step in progress.
	if len(a.Providers) != 1 || a.Providers[0].Provider != "demo" || len(a.Providers[0].Points) != 2 || !a.Providers[0].Points[1].Partial {
		t.Fatalf("after two calls: %+v", a)
	}
	p := a.Providers[0].Points[0]
	if p.Calls != 2 || p.Errors != 2 || p.P50 == nil || p.P95 == nil {
		t.Errorf("point: %+v", p)
	}
}
