package workers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"
)

var placeholderRE = regexp.MustCompile(`\{[a-z_]+\}`)

// SummaryMax is the longest summary returned: 16,000 characters, head and
// tail, enough for a final answer without flooding the orchestrator.
const SummaryMax = 16000

// answerRule says where a worker's final answer is.
type answerRule struct {
	// OutputFile: the worker writes its final answer to inv.OutputFile
	// (codex -o); it wins when non-empty.
	OutputFile bool
	// Path is a dotted path into the JSON object, or into each JSONL event
	// (the last event that has it wins).
	Path string
	// Alternatives are tried in order when Path is absent.
	Alternatives []string
	// Where filters JSONL events: only those whose path Where[0] equals
	// Where[1] (codex: item.type == agent_message; reasoning is dropped).
	Where [2]string
	// ErrorFlag is a boolean path that marks the answer as an error report;
	// ErrorPath a string path holding an error message.
	ErrorFlag, ErrorPath string
}

// parsed is what the parser found in a worker's output.
type parsed struct {
	Answer string
	// Events counts JSONL events and LastEvent is the type of the last one.
	Events    int
	LastEvent string
	// WorkerError is an error the worker itself reported (turn.failed,
	// is_error, error.message).
	WorkerError string
}

var errNoAnswer = errors.New("no final answer in the output")

// parseOutput extracts the final answer from stdout (and the output file).
func parseOutput(format string, rule answerRule, stdout []byte, outFile string) (*parsed, error) {
	p := &parsed{}
	var err error
	switch format {
	case "jsonl":
		err = parseJSONL(rule, stdout, p)
	case "json":
		err = parseJSON(rule, stdout, p)
	default:
		p.Answer = strings.TrimSpace(string(stdout))
	}
	if rule.OutputFile && strings.TrimSpace(outFile) != "" {
		p.Answer, err = strings.TrimSpace(outFile), nil
	}
	if err != nil {
		return p, err
	}
	if p.Answer == "" && p.WorkerError == "" && format != "text" {
		return p, errNoAnswer
	}
	return p, nil
}

func parseJSONL(rule answerRule, b []byte, p *parsed) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	bad := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev map[string]any
		if json.Unmarshal(line, &ev) != nil {
			bad++ // a CLI may print a banner line; only all-bad output fails
			continue
		}
		p.Events++
		typ, _ := ev["type"].(string)
		p.LastEvent = typ
		switch typ {
		case "turn.failed", "error":
			if m := firstString(ev, "error.message", "message"); m != "" {
				p.WorkerError = m
			}
		}
		if rule.Where[0] != "" {
			if v, _ := lookup(ev, rule.Where[0]).(string); v != rule.Where[1] {
				continue
			}
		}
		if s := firstString(ev, append([]string{rule.Path}, rule.Alternatives...)...); s != "" {
			p.Answer = s
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if p.Events == 0 && (bad > 0 || !rule.OutputFile) {
		return errors.New("no JSON event in the output")
	}
	return nil
}

func parseJSON(rule answerRule, b []byte, p *parsed) error {
	b = bytes.TrimSpace(b)
	// Some CLIs print a line before the object; take the last top-level object.
	if i := bytes.LastIndex(b, []byte("\n{")); i >= 0 && json.Valid(b[i+1:]) && !json.Valid(b) {
		b = b[i+1:]
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return errors.New("the output is not one JSON object")
	}
	p.Events = 1
	p.LastEvent, _ = obj["type"].(string)
	p.Answer = firstString(obj, append([]string{rule.Path}, rule.Alternatives...)...)
	if rule.ErrorFlag != "" {
		if v, _ := lookup(obj, rule.ErrorFlag).(bool); v {
			p.WorkerError, p.Answer = or(p.Answer, "the worker reported an error"), ""
		}
	}
	if rule.ErrorPath != "" {
		if m, _ := lookup(obj, rule.ErrorPath).(string); m != "" {
			p.WorkerError = m
		}
	}
	return nil
}

func firstString(obj map[string]any, paths ...string) string {
	for _, path := range paths {
		if path == "" {
			continue
		}
		if s, ok := lookup(obj, path).(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// lookup follows a dotted path through nested objects.
func lookup(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// capSummary keeps the head and the tail of s within max characters.
func capSummary(s string, max int) (string, bool) {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s, false
	}
	const marker = "\n[… %d characters omitted …]\n"
	// n has at least as many digits as the omitted count: the result fits.
	keep := max - utf8.RuneCountInString(strings.Replace(marker, "%d", itoa(n), 1))
	if keep < 2 {
		keep = 2
	}
	r := []rune(s)
	head, tail := keep/2, keep-keep/2
	note := strings.Replace(marker, "%d", itoa(n-head-tail), 1)
	return string(r[:head]) + note + string(r[n-tail:]), true
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// head returns the first n characters of s (for details.stdout_head).
func head(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
