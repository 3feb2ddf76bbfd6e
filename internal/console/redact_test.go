package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/console"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
)

// consoleCanary holds the characters HTML and JSON escape; "Zq7" is what a
// leak in any encoding would still show.
const consoleCanary = `cnry-console+key&<Zq7>"x`

// leaky is a provider whose description, tool description, schema and
// results all embed the canary (an upstream that puts a secret there).
type leaky struct{}

func (leaky) Info() catalog.ProviderInfo {
	return catalog.ProviderInfo{ID: "leaky", Kind: "test", Description: "Leaky service " + consoleCanary}
}

func (leaky) Tools(context.Context) ([]catalog.Tool, error) {
	q, _ := json.Marshal(consoleCanary)
	return []catalog.Tool{{Provider: "leaky", Name: "peek", ReadOnly: true, Description: "Peek with the key " + consoleCanary,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"k":{"type":"string","description":` + string(q) + `,"enum":[` + string(q) + `]}}}`)}}, nil
}

func (leaky) Call(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
	return &provider.Result{Text: "the key is " + consoleCanary, Structured: map[string]any{"key": consoleCanary}}, nil
}

// A regression guard: tool descriptions and schemas that embed a secret
// once showed raw on /ui/tools/... and /ui/api/tools. Every console answer goes through
// the redactor.
func TestEveryConsoleRouteRedacted(t *testing.T) {
	redact.Add("CONSOLE_CANARY", consoleCanary)
	f := newFixtureProviders(t, "", &console.Approvals{}, []provider.Provider{leaky{}})
	var peek string
	for _, tl := range f.app.Registry().Tools("leaky") {
		peek = tl.Canonical
	}
	if peek == "" {
		t.Fatal("no leaky tool")
	}
	cookie, csrf := f.login()
	hdr := []string{"Cookie", cookie, console.CSRFHeader, csrf}
	routes := []struct{ method, path, body string }{
		{"GET", "/ui/", ""},
		{"GET", "/ui/tools", ""},
		{"GET", "/ui/tools?q=peek+key", ""},
		{"GET", "/ui/tools/" + peek, ""},
		{"GET", "/ui/activity", ""},
		{"GET", "/ui/approvals", ""},
		{"GET", "/ui/api/approvals", ""},
		{"GET", "/ui/api/providers", ""},
		{"GET", "/ui/api/activity", ""},
		{"GET", "/ui/api/tools", ""},
		{"GET", "/ui/api/tools?q=peek", ""},
		{"GET", "/ui/api/tools/" + peek, ""},
		{"POST", "/ui/api/call", `{"tool":"` + peek + `","args":{}}`},
		{"PUT", "/ui/api/providers/leaky", `{"enabled":true}`},
		{"POST", "/ui/api/providers/leaky/restart", ""},
		{"GET", "/ui/tools/nope-" + consoleCanary, ""},
	}
	for _, r := range routes {
		res := f.do(r.method, r.path, r.body, hdr...)
		body := readAll(t, res)
		if res.StatusCode >= 500 {
			t.Errorf("%s %s: %d", r.method, r.path, res.StatusCode)
		}
		if strings.Contains(body, "Zq7") || strings.Contains(body, "cnry-console") {
			i := max(0, strings.Index(body, "Zq7")-120)
			t.Errorf("%s %s leaks the canary: …%.240s…", r.method, r.path, body[i:])
		}
		if n := res.Header.Get("Content-Length"); n != "" && n != itoa(len(body)) {
			t.Errorf("%s %s: Content-Length %s for %d bytes", r.method, r.path, n, len(body))
		}
	}
	// The pages show the name in the secret's place.
	if page := readAll(t, f.do("GET", "/ui/tools/"+peek, "", hdr...)); !strings.Contains(page, "[redacted: CONSOLE_CANARY]") {
		t.Error("the tool page does not show ${CONSOLE_CANARY}")
	}

	// The audit stream, event by event.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/ui/api/audit", nil)
	req.Header.Set("Cookie", cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rd := bufio.NewReader(res.Body)
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("first line %q %v", line, err)
	}
	for i := 0; i < 200; i++ {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if strings.Contains(line, "Zq7") {
			t.Fatalf("the audit stream leaks the canary: %s", line)
		}
		if strings.Contains(line, `"via":"console"`) {
			return // the recent lines (our calls) arrived, scrubbed
		}
	}
	t.Fatal("no audit line of the console's calls arrived")
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
