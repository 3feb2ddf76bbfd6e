package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/agent-tools/agent-tools/internal/index"
)

func runList(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "list", "list [--config FILE] [--json]").withJSON()
	if pos, ok := f.parse(args); !ok || len(pos) > 0 {
		if ok {
			f.Usage()
		}
		return ExitUsage
	}
	log, flush := deferredLog(env)
	defer flush() // warnings go under the table, each once
	a, code := load(ctx, env, f, log, nil)
	if a == nil {
		return code
	}
	defer a.Close()
	status := ExitOK
	if never := awaitProviders(ctx, env, a); len(never) > 0 {
		status = ExitFailed // a listing without them is not the whole list
		for _, d := range never {
			log.Warn("tools missing from the list", "provider", d.Provider, "reason", d.Reason)
		}
	}
	tools := a.Registry().Tools("")
	if f.json {
		type row struct {
			Name        string          `json:"name"`
			Provider    string          `json:"provider"`
			Original    string          `json:"originalName"`
			ReadOnly    bool            `json:"readOnly"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		rows := make([]row, 0, len(tools))
		for _, t := range tools {
			rows = append(rows, row{t.Canonical, t.Provider, t.Name, t.ReadOnly, t.Description, t.InputSchema})
		}
		if code := writeJSON(env.Stdout, rows); code != ExitOK {
			return code
		}
		return status
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROVIDER\tREAD-ONLY\tDESCRIPTION")
	for _, t := range tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Canonical, t.Provider, yesNo(t.ReadOnly), oneLine(t.Description, 80))
	}
	tw.Flush()
	return status
}

func runSearch(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "search", "search QUERY [--limit N] [--config FILE] [--json]").withJSON()
	limit := f.Int("limit", 10, "number of results")
	pos, ok := f.parse(args)
	if !ok {
		return ExitUsage
	}
	query := strings.TrimSpace(strings.Join(pos, " "))
	if query == "" || *limit < 1 {
		f.Usage()
		return ExitUsage
	}
	log, flush := deferredLog(env)
	defer flush()
	a, code := load(ctx, env, f, log, nil)
	if a == nil {
		return code
	}
	defer a.Close()
	for _, d := range awaitProviders(ctx, env, a) {
		log.Warn("tools missing from the search", "provider", d.Provider, "reason", d.Reason)
	}
	hits := a.Registry().Search(query, index.Options{Limit: *limit})
	type row struct {
		Rank        int     `json:"rank"`
		Kind        string  `json:"kind"`
		Name        string  `json:"name"`
		Provider    string  `json:"provider"`
		Score       float64 `json:"score"`
		Description string  `json:"description"`
	}
	rows := make([]row, 0, len(hits))
	for i, h := range hits {
		r := row{Rank: i + 1, Kind: h.Kind, Name: h.ID, Provider: h.Provider, Score: h.Score}
		if t, ok := a.Registry().Lookup(h.ID); ok {
			r.Description = t.Description
		}
		rows = append(rows, r)
	}
	if f.json {
		return writeJSON(env.Stdout, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stdout, "no matching tools")
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tNAME\tPROVIDER\tSCORE\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.2f\t%s\n", r.Rank, r.Name, r.Provider, r.Score, oneLine(r.Description, 70))
	}
	tw.Flush()
	return ExitOK
}

func writeJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "<prefix>" stays readable: this is not HTML
	if err := enc.Encode(v); err != nil {
		return ExitFailed
	}
	return ExitOK
}

// deferredLog collects warnings while a command loads and prints each
// distinct one once, when flush is called after the output: on a terminal
// they no longer cut through the table.
func deferredLog(env *Env) (*slog.Logger, func()) {
	var buf bytes.Buffer
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	log := stderrLog(&Env{Stderr: w}, slog.LevelWarn)
	return log, func() {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, line := range strings.SplitAfter(buf.String(), "\n") {
			// The same warning logged by several refreshes differs only in its time.
			key := line
			if _, rest, ok := strings.Cut(line, " level="); ok {
				key = rest
			}
			if line == "" || seen[key] {
				continue
			}
			seen[key] = true
			io.WriteString(env.Stderr, line)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// oneLine is s on one line of at most n runes, safe for a terminal.
func oneLine(s string, n int) string {
	s = printable(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
