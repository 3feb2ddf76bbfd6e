package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// prettyLimit: JSON answers up to this size are indented (one space) for
// reading; larger ones stay compact so that the result cap holds more data.
const prettyLimit = 16 << 10

// request is a call turned into HTTP, before credentials.
type request struct {
	method, url, path string // path: the escaped path under the base URL
	header            http.Header
	body              []byte
}

// Call implements provider.Provider: one HTTP request (two when a login
// token was refused and a new login succeeded).
func (p *Provider) Call(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	ops, err := p.load(ctx)
	if err != nil {
		return nil, toolerr.New(toolerr.ProviderUnavailable, "The service's API description could not be loaded; tell the user (agent-tools doctor shows why).", "%s", p.scrub(err.Error()))
	}
	op := ops[tool.Name]
	if op == nil {
		return nil, toolerr.New(toolerr.UnknownTool, "List the provider's tools again.", "%s has no operation %q", p.opts.ID, tool.Name)
	}
	in, err := decodeArgs(args)
	if err != nil {
		return nil, toolerr.New(toolerr.InvalidArguments, "Pass the arguments as one JSON object.", "%v", err)
	}
	req, err := p.buildRequest(op, in)
	if err != nil {
		return nil, err
	}
	resp, body, truncated, err := p.send(ctx, req)
	if err != nil {
		return nil, err
	}
	return p.shape(op, req, resp, body, truncated), nil
}

func decodeArgs(args json.RawMessage) (map[string]any, error) {
	in := map[string]any{}
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		return in, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	return in, nil
}

// argNames lists what the operation accepts, for "unknown argument" errors.
func (op *operation) argNames() []string {
	var names []string
	for _, pr := range op.params {
		names = append(names, pr.arg)
	}
	for a := range op.bodyField {
		names = append(names, a)
	}
	if op.bodyWhole != "" {
		names = append(names, op.bodyWhole)
	}
	slices.Sort(names)
	return names
}

// buildRequest maps the arguments onto the operation: path parameters
// substituted one segment each, query and header parameters, and the body.
func (p *Provider) buildRequest(op *operation, in map[string]any) (*request, error) {
	known := op.argNames()
	for k := range in {
		if !slices.Contains(known, k) {
			return nil, toolerr.New(toolerr.InvalidArguments, "Use only the arguments of the tool's input schema.",
				"unknown argument %q (the tool takes %s)", k, strings.Join(known, ", ")).With("expected_arguments", known)
		}
	}
	invalid := func(format string, a ...any) error {
		return toolerr.New(toolerr.InvalidArguments, "A path parameter is one value such as a name or an id, never a path, a query or a URL.", format, a...)
	}
	path, err := buildPath(op.path, func(name string) (string, bool) {
		v, ok := in[name]
		if !ok || v == nil {
			return "", false
		}
		return scalarText(v, ","), true
	})
	if err != nil {
		return nil, invalid("%v", err)
	}
	u := *p.base
	u.RawPath = u.EscapedPath() + path
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return nil, invalid("%v", err)
	}
	if !underBase(p.base, &u) {
		return nil, invalid("the request would leave the base URL")
	}
	r := &request{method: op.method, path: path, header: http.Header{}}
	q := url.Values{}
	var cookies []string
	for _, pr := range op.params {
		v, ok := in[pr.arg]
		if !ok || v == nil {
			continue
		}
		switch pr.in {
		case "query":
			addQuery(q, pr, v)
		case "header", "cookie":
			text := scalarText(v, ",")
			if strings.ContainsAny(text, "\r\n\x00") {
				return nil, toolerr.New(toolerr.InvalidArguments, "A header value is one line of text.", "%s parameter %q holds a line break or NUL", pr.in, pr.name)
			}
			if pr.in == "header" {
				r.header.Set(pr.name, text)
			} else {
				cookies = append(cookies, (&http.Cookie{Name: pr.name, Value: text}).String())
			}
		}
	}
	if len(cookies) > 0 {
		r.header.Set("Cookie", strings.Join(cookies, "; "))
	}
	u.RawQuery = q.Encode()
	r.url = u.String()
	if err := op.encodeBody(r, in); err != nil {
		return nil, toolerr.New(toolerr.InvalidArguments, "Pass the body fields as the input schema describes.", "%v", err)
	}
	for k, v := range p.opts.Headers {
		r.header.Set(k, v)
	}
	if r.header.Get("Accept") == "" {
		r.header.Set("Accept", "application/json, */*;q=0.5")
	}
	return r, nil
}

func addQuery(q url.Values, pr param, v any) {
	switch x := v.(type) {
	case []any:
		if !pr.explode {
			q.Add(pr.name, scalarText(x, delimiter(pr.style)))
			return
		}
		for _, e := range x {
			q.Add(pr.name, scalarText(e, ","))
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			switch {
			case pr.style == "deepObject":
				q.Add(pr.name+"["+k+"]", scalarText(x[k], ","))
			case pr.explode:
				q.Add(k, scalarText(x[k], ","))
			default:
				q.Add(pr.name, k+","+scalarText(x[k], ","))
			}
		}
	default:
		q.Add(pr.name, scalarText(v, ","))
	}
}

func delimiter(style string) string {
	switch style {
	case "spaceDelimited":
		return " "
	case "pipeDelimited":
		return "|"
	}
	return ","
}

// scalarText is a parameter value as text: strings as they are, numbers as
// written, arrays joined by sep, objects as JSON.
func scalarText(v any, sep string) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = scalarText(e, sep)
		}
		return strings.Join(parts, sep)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (op *operation) encodeBody(r *request, in map[string]any) error {
	switch {
	case op.bodyKind == "":
		return nil
	case op.bodyWhole != "":
		v, ok := in[op.bodyWhole]
		if !ok {
			return nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		r.body = b
	default:
		fields := map[string]any{}
		for arg, field := range op.bodyField {
			if v, ok := in[arg]; ok {
				fields[field] = v
			}
		}
		if len(fields) == 0 && !slices.Contains([]string{"POST", "PUT", "PATCH"}, op.method) {
			return nil
		}
		if op.bodyKind == "form" {
			f := url.Values{}
			for _, k := range sortedKeys(fields) {
				if arr, ok := fields[k].([]any); ok {
					for _, e := range arr {
						f.Add(k, scalarText(e, ","))
					}
					continue
				}
				f.Add(k, scalarText(fields[k], ","))
			}
			r.body = []byte(f.Encode())
			break
		}
		b, err := json.Marshal(fields)
		if err != nil {
			return err
		}
		r.body = b
	}
	r.header.Set("Content-Type", op.bodyMedia)
	return nil
}

// send makes the request with credentials; with a login flow, a 401 drops
// the token, logs in once more and retries once.
func (p *Provider) send(ctx context.Context, r *request) (*http.Response, []byte, bool, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, r.method, r.url, bodyReader(r.body))
		if err != nil {
			return nil, nil, false, err
		}
		req.Header = r.header.Clone()
		// With traces on, the service may continue the call's trace (W3C
		// traceparent only); off, the global propagator injects nothing.
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
		if p.untrusted.Load() && p.hasCredentials() {
			return nil, nil, false, toolerr.New(toolerr.ProviderUnavailable,
				"The service's credentials are only sent to a base URL the configuration names; tell the user (agent-tools doctor shows why).",
				"%s: the document's servers[0] is on another origin than the document; set baseURL in the config to send the credentials there", p.opts.ID)
		}
		tok, err := p.auth.apply(ctx, req, p.login)
		if err != nil {
			return nil, nil, false, err
		}
		resp, err := p.client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, false, ctx.Err()
			}
			return nil, nil, false, toolerr.New(toolerr.BackendError, "The service could not be reached; tell the user if it persists.",
				"%s %s: %s", r.method, r.path, p.scrub(errText(err)))
		}
		if resp.StatusCode == http.StatusUnauthorized && p.auth.isLogin() && attempt == 0 {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // drained so the connection is reused; its content is not needed
			resp.Body.Close()
			p.auth.invalidate(tok)
			continue
		}
		body, truncated, err := readCapped(&progressReader{ctx: ctx, r: resp.Body, total: resp.ContentLength}, p.opts.MaxBody)
		resp.Body.Close()
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, false, ctx.Err()
			}
			return nil, nil, false, toolerr.New(toolerr.BackendError, "The answer broke off; retry once, then tell the user.",
				"%s %s: reading the answer: %s", r.method, r.path, p.scrub(errText(err)))
		}
		return resp, p.scrubBytes(body), truncated, nil
	}
}

// progressReader reports a long download as MCP progress (every 1 MiB).
type progressReader struct {
	ctx        context.Context
	r          io.Reader
	total      int64 // -1: unknown
	read, next int64
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.read += int64(n)
	if pr.read >= pr.next+1<<20 {
		pr.next = pr.read
		total := float64(pr.total)
		if pr.total < 0 {
			total = 0
		}
		provider.ReportProgress(pr.ctx, float64(pr.read), total, fmt.Sprintf("received %d KiB", pr.read>>10))
	}
	return n, err
}

func bodyReader(b []byte) io.Reader {
	if b == nil {
		return nil
	}
	return bytes.NewReader(b)
}

// readCapped reads at most max bytes and drains a bounded rest, so that a
// huge answer costs max bytes of memory, not its size.
func readCapped(r io.Reader, max int64) ([]byte, bool, error) {
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > max {
		return body[:max], true, nil
	}
	return body, false, nil
}

func (p *Provider) scrubBytes(b []byte) []byte {
	b = redact.Default.Bytes(b)
	for _, sec := range p.Secrets() {
		if len(sec) >= 4 && bytes.Contains(b, []byte(sec)) {
			b = bytes.ReplaceAll(b, []byte(sec), []byte(redact.Redacted))
		}
	}
	return b
}

// shape turns the HTTP answer into the result the model reads.
func (p *Provider) shape(op *operation, r *request, resp *http.Response, body []byte, truncated bool) *provider.Result {
	status := resp.StatusCode
	line := fmt.Sprintf("%s %s answered HTTP %d %s", r.method, r.path, status, http.StatusText(status))
	if status/100 == 3 {
		where := "elsewhere"
		if loc, err := resp.Location(); err == nil {
			loc.RawQuery, loc.Fragment, loc.User = "", "", nil
			where = loc.String()
		}
		return &provider.Result{IsError: true, Text: line + ": a redirect to " + where + " outside the base URL is not followed",
			Details: map[string]any{"status": status, "method": r.method, "path": r.path, "redirect": where,
				"hint": "The service sent the request outside its configured base URL; tell the user (baseURL in the config may be wrong)."}}
	}
	if status/100 != 2 {
		ex := excerpt(textOf(resp, body), 1000)
		advice := hintFor(status)
		return &provider.Result{IsError: true, Text: line + ". " + advice + "\n" + ex,
			Details: map[string]any{"status": status, "method": r.method, "path": r.path, "body_excerpt": ex, "hint": advice}}
	}
	if len(body) == 0 || r.method == http.MethodHead {
		return &provider.Result{Text: line + " (no body)", Structured: map[string]any{"status": status}}
	}
	note := ""
	if truncated {
		note = fmt.Sprintf("\n[answer truncated at %d bytes; ask for less, e.g. with paging parameters]", p.opts.MaxBody)
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case isJSON(media) || media == "" && json.Valid(body):
		if truncated {
			return &provider.Result{Text: string(body) + note}
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return &provider.Result{Text: textOf(resp, body)}
		}
		var out bytes.Buffer
		var err error
		if len(body) <= prettyLimit {
			err = json.Indent(&out, body, "", " ")
		} else {
			err = json.Compact(&out, body)
		}
		if err != nil {
			out.Reset()
			out.Write(body)
		}
		res := &provider.Result{Text: out.String()}
		if m, ok := v.(map[string]any); ok {
			res.Structured = m
		} else {
			res.Structured = map[string]any{"result": v}
		}
		return res
	case textual(media) && utf8.Valid(body):
		return &provider.Result{Text: string(body) + note}
	}
	size := fmt.Sprintf("%d bytes", len(body))
	if truncated {
		size = fmt.Sprintf("more than %d bytes", p.opts.MaxBody)
	}
	return &provider.Result{Text: fmt.Sprintf("%s: binary content (%s, %s), not shown", line, orUnknown(media), size),
		Structured: map[string]any{"status": status, "content_type": orUnknown(media), "size": len(body), "truncated": truncated}}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

func textual(media string) bool {
	return strings.HasPrefix(media, "text/") || media == "" || strings.HasSuffix(media, "+xml") ||
		slices.Contains([]string{"application/xml", "application/yaml", "application/x-yaml", "application/javascript", "application/x-www-form-urlencoded"}, media)
}

func textOf(resp *http.Response, body []byte) string {
	if !utf8.Valid(body) {
		return fmt.Sprintf("(%d bytes of binary content)", len(body))
	}
	return string(body)
}

// hintFor is what to do about an HTTP error status.
func hintFor(status int) string {
	switch {
	case status == 401 || status == 403:
		return "The service refused the credentials or the permission: they are configured on the host (auth in agent-tools.yaml), never passed as arguments; tell the user to check them."
	case status == 404:
		return "Nothing there: check the path parameters (names, ids, owners); list or search first to get real values."
	case status == 400 || status == 422:
		return "The service rejected the request: read body_excerpt, fix the named fields of the body or the parameters, then retry."
	case status == 409:
		return "Conflict with the current state: fetch the resource again, then decide."
	case status == 429:
		return "Rate limited: wait before calling again, and call less often."
	case status >= 500:
		return "The service failed on its side; retry later or tell the user, do not retry in a loop."
	}
	return "Read body_excerpt; fix the request before retrying."
}
