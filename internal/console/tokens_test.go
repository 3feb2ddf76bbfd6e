package console_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/console"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/tokens"
)

// GET /ui/api/activity carries the result-token totals: per tool and per
// identity, since start and over the window, each the sum of the audit
// lines' result_tokens for the calls made.
func TestActivityTokenTotals(t *testing.T) {
	tokens.Load()
	f := newFixture(t)
	cookie, csrf := f.login()
	greet, wipe := f.canonical("greet"), f.canonical("wipe")
	for _, body := range []string{
		`{"tool":"` + greet + `","args":{"name":"Ada Lovelace"}}`,
		`{"tool":"` + greet + `","args":{"name":"Grace Hopper, who wrote the first compiler"}}`,
		`{"tool":"` + greet + `"}`, // no name: INVALID_ARGUMENTS, its envelope counted
		`{"tool":"` + wipe + `","confirm":true}`,
	} {
		if res := f.do("POST", "/ui/api/call", body, "Cookie", cookie, console.CSRFHeader, csrf, "Content-Type", "application/json"); res.StatusCode != http.StatusOK {
			t.Fatalf("call %s: %d", body, res.StatusCode)
		}
	}
	recent, _, cancel := f.app.SubscribeAudit()
	cancel()
	byTool, byID := map[string]int64{}, map[string]int64{}
	calls := 0
	for _, line := range recent {
		var rec struct {
			Tool         string `json:"tool"`
			Identity     string `json:"identity"`
			ResultTokens *int64 `json:"result_tokens"`
			Estimated    bool   `json:"result_tokens_estimated"`
		}
		if err := json.Unmarshal(line, &rec); err != nil || rec.ResultTokens == nil || rec.Estimated {
			t.Fatalf("audit line without an exact result_tokens: %s (%v)", line, err)
		}
		id := rec.Identity
		if id == "" {
			id = metrics.NoIdentity
		}
		byTool[rec.Tool] += *rec.ResultTokens
		byID[id] += *rec.ResultTokens
		calls++
	}
	if calls < 4 || byTool[greet] == 0 || byTool[wipe] == 0 {
		t.Fatalf("audit: %d lines, %v", calls, byTool)
	}
	res := f.do("GET", "/ui/api/activity", "", "Cookie", cookie)
	var a struct {
		Tokens *metrics.TokenTotals `json:"tokens"`
	}
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil || a.Tokens == nil {
		t.Fatalf("activity: %d %v %+v", res.StatusCode, err, a)
	}
	check := func(what string, rows []metrics.TokenRow, want map[string]int64) {
		t.Helper()
		if len(rows) != len(want) {
			t.Errorf("%s rows %+v, want %v", what, rows, want)
		}
		for _, r := range rows {
			if r.Tokens != want[r.Name] || r.WindowTokens != r.Tokens || r.WindowCalls != r.Calls {
				t.Errorf("%s %s: %+v, want %d tokens (audit)", what, r.Name, r, want[r.Name])
			}
		}
	}
	check("tool", a.Tokens.Tools, byTool)
	check("identity", a.Tokens.Identities, byID)

	// The page has the section, drawn by the script from the same API.
	page := readAll(t, f.do("GET", "/ui/activity", "", "Cookie", cookie))
	for _, want := range []string{`id="tokens"`, "result_tokens"} {
		if !strings.Contains(page, want) {
			t.Errorf("activity page lacks %q", want)
		}
	}
}
