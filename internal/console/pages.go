package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/agent-tools/agent-tools/internal/status"
)

// pageNames are the templates under assets/pages, each rendered inside
// assets/layout.html.
var pageNames = []string{"login", "providers", "tools", "tool", "activity", "approvals", "pins"}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").ParseFS(assets, "assets/layout.html", "assets/pages/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: parsing page %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// view is what every page gets: its own data plus the layout's.
type view struct {
	Title string
	Nav   string
	CSRF  string
	User  string
	Data  any
}

func (c *Console) render(w http.ResponseWriter, code int, name string, data any) {
	v, ok := data.(view)
	if !ok {
		v = view{Data: data}
		if ld, ok := data.(loginData); ok {
			v.Title = ld.Title
		}
	}
	var b bytes.Buffer
	if err := c.pages[name].Execute(&b, v); err != nil {
		c.log.Error("console: rendering a page", "page", name, "err", err)
		http.Error(w, "rendering the page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

func (c *Console) view(r *http.Request, title, nav string, data any) view {
	who := callerOf(r.Context())
	return view{Title: title, Nav: nav, CSRF: who.csrf, User: who.user, Data: data}
}

// providerRow is one line of the Providers page: the runtime's own state
// (status.ProviderState: ready, starting, failed, disabled), as the API gives it.
type providerRow struct {
	status.ProviderState
	// LastErrorWhen is LastErrorAt as the page shows it ("" when unknown).
	LastErrorWhen string
}

// errorWhen formats a last error's time as the page's script does.
func errorWhen(at *time.Time) string {
	if at == nil {
		return ""
	}
	return at.UTC().Format("15:04:05") + " UTC"
}

func (c *Console) providersPage(w http.ResponseWriter, r *http.Request) {
	st := c.rt.Status()
	rows := make([]providerRow, 0, len(st.Providers))
	for _, p := range st.Providers {
		rows = append(rows, providerRow{ProviderState: p, LastErrorWhen: errorWhen(p.LastErrorAt)})
	}
	c.render(w, http.StatusOK, "providers", c.view(r, "Providers", "providers", map[string]any{"Status": st, "Rows": rows}))
}

func (c *Console) toolsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	c.render(w, http.StatusOK, "tools", c.view(r, "Tools", "tools", map[string]any{"Query": q, "Hits": c.search(q)}))
}

func (c *Console) toolPage(w http.ResponseWriter, r *http.Request) {
	t, ok := c.tool(r.PathValue("name"))
	if !ok {
		c.render(w, http.StatusNotFound, "tool", c.view(r, "Unknown tool", "tools", map[string]any{"Missing": r.PathValue("name")}))
		return
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, t.InputSchema, "", "  "); err != nil {
		pretty.Write(t.InputSchema)
	}
	c.render(w, http.StatusOK, "tool", c.view(r, t.Canonical, "tools", map[string]any{
		"Tool": t, "Schema": pretty.String(), "Fields": formFields(t.InputSchema),
	}))
}

func (c *Console) activityPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, http.StatusOK, "activity", c.view(r, "Activity", "activity", map[string]any{"Charts": c.opts.Activity != nil, "Tokens": c.opts.Tokens != nil}))
}
