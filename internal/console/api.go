package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/status"
)

// maxBody bounds an API request body.
const maxBody = 1 << 20

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func errBody(code, msg string) map[string]string {
	return map[string]string{"error": code, "message": redact.String(msg)}
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, errBody("bad_request", "request body: "+err.Error()))
		return false
	}
	return true
}

// apiProviders is GET /ui/api/providers: the runtime's status.
func (c *Console) apiProviders(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, c.rt.Status())
}

// apiSetProvider is PUT /ui/api/providers/{id} {"enabled": bool}.
func (c *Console) apiSetProvider(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Enabled *bool `json:"enabled"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if body.Enabled == nil {
		writeJSON(w, http.StatusBadRequest, errBody("bad_request", `want {"enabled": true|false}`))
		return
	}
	id := r.PathValue("id")
	if err := c.rt.SetEnabled(r.Context(), id, *body.Enabled); err != nil {
		code := http.StatusInternalServerError
		switch {
		case errors.Is(err, status.ErrUnknownProvider):
			code = http.StatusNotFound
		case errors.Is(err, status.ErrUnavailable):
			code = http.StatusConflict
		}
		writeJSON(w, code, errBody("set_enabled", err.Error()))
		return
	}
	c.log.Info("console toggled a provider", "user", callerOf(r.Context()).user, "provider", id, "enabled", *body.Enabled)
	for _, p := range c.rt.Status().Providers {
		if p.ID == id {
			writeJSON(w, http.StatusOK, p)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "enabled": *body.Enabled})
}

// restartTimeout bounds how long POST .../restart waits for the new start
// (an upstream's own start-up timeout is 30 s by default); the restart goes
// on after it, and the page shows the state as it is.
const restartTimeout = 45 * time.Second

// apiRestart is POST /ui/api/providers/{id}/restart: restart one upstream
// (App.Restart) and answer its new state. 404 unknown, 409 disabled or not
// restartable, 502 when the new start failed (the body says why).
func (c *Console) apiRestart(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), restartTimeout)
	defer cancel()
	err := c.rt.Restart(ctx, id)
	switch {
	case errors.Is(err, status.ErrUnknownProvider):
		writeJSON(w, http.StatusNotFound, errBody("restart", err.Error()))
		return
	case errors.Is(err, status.ErrDisabled), errors.Is(err, status.ErrNotRestartable):
		writeJSON(w, http.StatusConflict, errBody("restart", err.Error()))
		return
	}
	c.log.Info("console restarted a provider", "user", callerOf(r.Context()).user, "provider", id, "ok", err == nil)
	if err != nil {
		writeJSON(w, http.StatusBadGateway, errBody("restart", err.Error()))
		return
	}
	for _, p := range c.rt.Status().Providers {
		if p.ID == id {
			writeJSON(w, http.StatusOK, p)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id})
}

// apiActivity is GET /ui/api/activity: per-provider calls, errors and
// p50/p95 latency over the last minutes, one point per step.
//
// With a TokenSource it carries tokens too: result tokens per tool and
// per identity, since start and over the last minutes.
func (c *Console) apiActivity(w http.ResponseWriter, r *http.Request) {
	out := activityJSON{Activity: metrics.Activity{Providers: []metrics.Series{}}}
	if c.opts.Activity != nil {
		out.Activity = c.opts.Activity.Live(time.Now())
		for i := range out.Providers { // provider ids are label values: scrubbed like every output
			out.Providers[i].Provider = redact.String(out.Providers[i].Provider)
		}
	}
	if c.opts.Tokens != nil {
		t := c.opts.Tokens.Totals(time.Now())
		for _, rows := range [][]metrics.TokenRow{t.Tools, t.Identities} {
			for i := range rows {
				rows[i].Name = redact.String(rows[i].Name)
			}
		}
		out.Tokens = &t
	}
	writeJSON(w, http.StatusOK, out)
}

// activityJSON is GET /ui/api/activity's answer.
type activityJSON struct {
	metrics.Activity
	Tokens *metrics.TokenTotals `json:"tokens,omitempty"`
}

// Hit is one search result as the console shows it.
type Hit struct {
	Name     string  `json:"name"`
	Kind     string  `json:"kind"`
	Provider string  `json:"provider"`
	Score    float64 `json:"score"`
	Why      string  `json:"why,omitempty"`
	Summary  string  `json:"summary,omitempty"`
}

// searchLimit bounds the hits of one console search.
const searchLimit = 25

// search runs the model's own index (the registry's Search, as the
// search meta-tool does); an empty query lists every enabled tool.
func (c *Console) search(q string) []Hit {
	reg := c.rt.Registry()
	var out []Hit
	if strings.TrimSpace(q) == "" {
		for _, t := range reg.Tools("") {
			out = append(out, Hit{Name: t.Canonical, Kind: "tool", Provider: t.Provider, Summary: summary(t.Description)})
		}
		return out
	}
	for _, h := range reg.Search(q, index.Options{Limit: searchLimit, Explain: true}) {
		hit := Hit{Name: h.ID, Kind: h.Kind, Provider: h.Provider, Score: h.Score, Why: h.Why}
		if t, ok := reg.Lookup(h.ID); ok && h.Kind == "tool" {
			hit.Summary = summary(t.Description)
		}
		out = append(out, hit)
	}
	return out
}

func summary(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n\r"); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 140 {
		s = string(r[:139]) + "…"
	}
	return s
}

// apiTools is GET /ui/api/tools?q=: hits with their scores.
func (c *Console) apiTools(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	hits := c.search(q)
	if hits == nil {
		hits = []Hit{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"query": q, "hits": hits})
}

// ToolView is one tool as the console shows it.
type ToolView struct {
	catalog.Tool
	// Mutating says the policy asks for a confirmation before it runs.
	Mutating bool `json:"mutating"`
}

func (c *Console) tool(name string) (ToolView, bool) {
	reg := c.rt.Registry()
	t, ok := reg.Lookup(name)
	if !ok {
		return ToolView{}, false
	}
	_, info, _ := reg.Provider(t.Provider)
	return ToolView{Tool: t, Mutating: policy.NeedsConfirm(t, info)}, true
}

// apiTool is GET /ui/api/tools/{name}: description and schema.
func (c *Console) apiTool(w http.ResponseWriter, r *http.Request) {
	t, ok := c.tool(r.PathValue("name"))
	if !ok {
		writeJSON(w, http.StatusNotFound, errBody("unknown_tool", "no enabled tool is called "+strconv.Quote(r.PathValue("name"))))
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// CallRequest is the body of POST /ui/api/call.
type CallRequest struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
	// Confirm is the person's confirmation of a mutating call, asked in the
	// page; without it such a call gets the policy's answer (a confirmation
	// the model would be asked for, or DENIED).
	Confirm bool `json:"confirm,omitempty"`
}

// CallResult is the call's outcome as the model would see it.
type CallResult struct {
	IsError bool `json:"isError"`
	// Text is the content the model reads: the tool's text, or the teaching
	// error's JSON envelope.
	Text              string `json:"text"`
	StructuredContent any    `json:"structuredContent,omitempty"`
	Decision          string `json:"decision,omitempty"`
	DurationMS        int64  `json:"durationMs"`
}

// consoleShape renders a retry as the console's own API call.
type consoleShape struct{}

func (consoleShape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	m := map[string]any{"tool": tool}
	if len(args) > 0 {
		m["args"] = args
	}
	if confirm != nil {
		m["confirm"] = true
	}
	return m
}

// apiCall is POST /ui/api/call: the same pipeline as the model's calls
// (audit, loop guard, resolve, validate, policy, execute).
func (c *Console) apiCall(w http.ResponseWriter, r *http.Request) {
	var body CallRequest
	if !decodeBody(w, r, &body) {
		return
	}
	args := bytes.TrimSpace(body.Args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	who := callerOf(r.Context())
	req := &pipeline.Request{
		Caller: *who.policyCaller(), Via: "console",
		Tool: body.Tool, Args: json.RawMessage(args), Shape: consoleShape{},
	}
	if body.Confirm {
		// The person ticked the confirmation in the page: a human
		// confirmation, as `agent-tools call --confirm` is — when the gate
		// says this caller can give one (an operator, logged in with the
		// console's cookie: a bearer token may be the agent's own).
		d := c.rt.Gate().Decide(&req.Caller, policy.Approve, policy.Target{Canonical: body.Tool})
		if d.Verdict != policy.Allow {
			writeJSON(w, http.StatusForbidden, errBody("forbidden", d.Err.Message+". "+d.Err.Hint))
			return
		}
		req.AskHuman = func(context.Context, string) (policy.Approval, error) { return policy.ApprovedOnce, nil }
	}
	start := time.Now()
	resp := c.rt.Call(r.Context(), req)
	out := CallResult{Decision: resp.Decision, DurationMS: time.Since(start).Milliseconds()}
	switch {
	case resp.Err != nil:
		out.IsError, out.Text, out.StructuredContent = true, resp.Err.JSON(), resp.Err.Body()
	case resp.Result != nil:
		out.IsError, out.Text, out.StructuredContent = resp.Result.IsError, resp.Result.Text, resp.Result.Structured
	}
	out.Text = redact.String(out.Text)
	writeJSON(w, http.StatusOK, out)
}

// sseHeartbeat keeps idle audit streams open through proxies.
const sseHeartbeat = 20 * time.Second

// apiAudit is GET /ui/api/audit: the audit tail as server-sent events, the
// recent lines first, then each new one as it is written.
func (c *Console) apiAudit(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	recent, lines, cancel := c.rt.SubscribeAudit()
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("retry: 3000\n\n")); err != nil {
		return
	}
	for _, l := range recent {
		writeEvent(w, l)
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(sseHeartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.opts.Done:
			return
		case l, ok := <-lines:
			if !ok {
				return
			}
			writeEvent(w, l)
		case <-tick.C:
			_, _ = w.Write([]byte(": keep-alive\n\n"))
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// writeEvent writes one audit line as an SSE "audit" event (a line with
// newlines inside becomes several data: lines, as SSE requires).
func writeEvent(w http.ResponseWriter, line []byte) {
	var b bytes.Buffer
	b.WriteString("event: audit\n")
	for _, part := range bytes.Split(bytes.TrimRight(line, "\r\n"), []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimRight(part, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, _ = w.Write(b.Bytes())
}
