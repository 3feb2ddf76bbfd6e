package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/tokens"
)

// runStats reads the audit log and prints, per tool (or identity), the
// calls, errors, result tokens and p50/p99 duration, most tokens first.
// A line that is not an audit record is counted and skipped, never fatal.
func runStats(_ context.Context, env *Env, args []string) int {
	f := newFlags(env, "stats", "stats [--audit FILE] [--config FILE] [--json] [--since DUR|TIME] [--by tool|identity]").withJSON()
	auditPath := f.String("audit", "", "audit log to read (default: the config's audit.path)")
	since := f.String("since", "", "only calls since a duration ago (24h, 90m) or an RFC 3339 time")
	by := f.String("by", "tool", "group by tool or identity")
	if _, ok := f.parse(args); !ok {
		return ExitUsage
	}
	if *by != "tool" && *by != "identity" {
		fmt.Fprintf(env.Stderr, "agent-tools: --by %q: want tool or identity\n", *by)
		return ExitUsage
	}
	var from time.Time
	if *since != "" {
		t, err := parseSince(*since, time.Now())
		if err != nil {
			fmt.Fprintln(env.Stderr, "agent-tools:", err)
			return ExitUsage
		}
		from = t
	}
	path := *auditPath
	if path == "" {
		p, code := configuredAudit(env, f)
		if p == "" {
			return code
		}
		path = p
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(env.Dir, path)
	}
	file, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools: reading the audit log:", err)
		return ExitFailed
	}
	defer file.Close()
	st, err := readStats(file, *by, from)
	if err != nil {
		fmt.Fprintf(env.Stderr, "agent-tools: reading %s: %v\n", path, err)
		return ExitFailed
	}
	st.Audit, st.By = path, *by
	if !from.IsZero() {
		st.Since = from.UTC().Format(time.RFC3339)
	}
	if f.json {
		return writeJSON(env.Stdout, st)
	}
	printStats(env, st)
	return ExitOK
}

// configuredAudit is the audit log the config names (--config, else
// ./agent-tools.yaml); "" with the exit status when there is none to read.
func configuredAudit(env *Env, f *flags) (string, int) {
	cfgPath := f.configPath(env)
	if cfgPath == "" {
		cfgPath, _ = config.Find(env.Dir)
	}
	cfg := config.Default(env.Dir)
	if cfgPath != "" {
		c, err := config.Load(cfgPath, env.LookupEnv)
		if err != nil {
			fmt.Fprintln(env.Stderr, "agent-tools:", errorText(err))
			return "", ExitUsage
		}
		cfg = c
	}
	switch cfg.Audit.Path {
	case config.AuditOff:
		fmt.Fprintln(env.Stderr, "agent-tools: the audit log is off (audit.path: off): nothing to read; pass --audit FILE to read another log")
		return "", ExitUsage
	case "":
		fmt.Fprintln(env.Stderr, "agent-tools: the audit log goes to stderr (no audit.path in the config): pass --audit FILE, or set audit.path")
		return "", ExitUsage
	}
	return cfg.Audit.Path, ExitOK
}

// parseSince reads --since: a duration before now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (24h, 90m) or an RFC 3339 time (2026-12-01T00:00:00Z)", s)
}

// statsOut is what stats prints (--json as is).
type statsOut struct {
	Audit string `json:"audit"`
	By    string `json:"by"`
	Since string `json:"since,omitempty"`
	// Calls are the audit records read (after --since).
	Calls int64 `json:"calls"`
	// Malformed are the lines that are no audit record, skipped.
	Malformed int64 `json:"malformed"`
	// Estimated are the records whose result_tokens are characters/4
	// (result_tokens_estimated); NoTokens those without result_tokens
	// (written before the field existed), counted as 0 tokens.
	Estimated int64      `json:"estimated"`
	NoTokens  int64      `json:"no_tokens"`
	Tokens    int64      `json:"tokens"`
	Rows      []statsRow `json:"rows"`
}

type statsRow struct {
	Name   string  `json:"name"`
	Calls  int64   `json:"calls"`
	Errors int64   `json:"errors"`
	Tokens int64   `json:"tokens"`
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`

	durations []float64
}

// statsRecord is the part of an audit line stats reads.
type statsRecord struct {
	Time         time.Time `json:"time"`
	Tool         *string   `json:"tool"`
	Identity     string    `json:"identity"`
	DurationMS   float64   `json:"duration_ms"`
	Outcome      string    `json:"outcome"`
	ResultTokens *int64    `json:"result_tokens"`
	Estimated    bool      `json:"result_tokens_estimated"`
}

// maxAuditLine bounds one line (an audit record is a few hundred bytes).
const maxAuditLine = 1 << 20

func readStats(r io.Reader, by string, from time.Time) (*statsOut, error) {
	st := &statsOut{Rows: []statsRow{}}
	rows := map[string]*statsRow{}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(strings.TrimSpace(string(line))) > 0 {
			var rec statsRecord
			if json.Unmarshal(line, &rec) != nil || rec.Tool == nil || rec.Outcome == "" {
				st.Malformed++
			} else if from.IsZero() || !rec.Time.Before(from) {
				name := *rec.Tool
				if by == "identity" {
					name = rec.Identity
					if name == "" {
						name = "(none)"
					}
				}
				row := rows[name]
				if row == nil {
					row = &statsRow{Name: name}
					rows[name] = row
				}
				st.Calls++
				row.Calls++
				if rec.Outcome != "ok" {
					row.Errors++
				}
				if rec.ResultTokens == nil {
					st.NoTokens++
				} else {
					row.Tokens += *rec.ResultTokens
					st.Tokens += *rec.ResultTokens
					if rec.Estimated {
						st.Estimated++
					}
				}
				row.durations = append(row.durations, rec.DurationMS)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	for _, row := range rows {
		slices.Sort(row.durations)
		row.P50MS, row.P99MS = rank(row.durations, 0.50), rank(row.durations, 0.99)
		st.Rows = append(st.Rows, *row)
	}
	slices.SortFunc(st.Rows, func(a, b statsRow) int {
		switch {
		case a.Tokens != b.Tokens:
			return cmpDesc(a.Tokens, b.Tokens)
		case a.Calls != b.Calls:
			return cmpDesc(a.Calls, b.Calls)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return st, nil
}

// readLine reads one line; a line longer than maxAuditLine is returned
// cut (it then fails to parse and is counted as malformed).
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(out) < maxAuditLine {
			out = append(out, chunk[:min(len(chunk), maxAuditLine-len(out))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return out, err
	}
}

func cmpDesc(a, b int64) int {
	if a > b {
		return -1
	}
	return 1
}

// rank is the q-quantile of sorted by the nearest-rank method (0 for none).
func rank(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func printStats(env *Env, st *statsOut) {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tCALLS\tERRORS\tTOKENS\tTOKENS/CALL\tP50 MS\tP99 MS\n", strings.ToUpper(st.By))
	for _, r := range st.Rows {
		per := int64(0)
		if r.Calls > 0 {
			per = r.Tokens / r.Calls
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", printable(r.Name), r.Calls, r.Errors, r.Tokens, per, fmtMS(r.P50MS), fmtMS(r.P99MS))
	}
	tw.Flush()
	since := ""
	if st.Since != "" {
		since = " since " + st.Since
	}
	fmt.Fprintf(env.Stdout, "%d calls%s, %d result tokens, from %s\n", st.Calls, since, st.Tokens, st.Audit)
	if st.Estimated > 0 {
		fmt.Fprintf(env.Stdout, "%d results were counted as characters/4 (result_tokens_estimated: over %d KiB, or before the tokenizer loaded)\n", st.Estimated, tokens.MaxExact>>10)
	}
	if st.NoTokens > 0 {
		fmt.Fprintf(env.Stdout, "%d lines have no result_tokens (written by an older version): counted as 0 tokens\n", st.NoTokens)
	}
	if st.Malformed > 0 {
		fmt.Fprintf(env.Stderr, "agent-tools: skipped %d malformed lines (not an audit record)\n", st.Malformed)
	}
}

func fmtMS(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
