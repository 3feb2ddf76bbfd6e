package resultguard

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// recorded is one line of testdata/recorded.jsonl: a real tool output.
// Recorded from the reference MCP servers (server-everything,
// server-filesystem over this repository, server-memory; 2026.8.31, the
// interop peers), from git and ls in this repository and from its
// documentation files, as MCP results (docs/result-guard.md says how).
type recorded struct {
	Source string          `json:"source"`
	Tool   string          `json:"tool"`
	Result json.RawMessage `json:"result"`
	// Quotes: the output quotes injections on purpose (docs/pins.md lists
	// the scanner's rules with examples). It is no benign output: the
	// guard must flag it, as a model reading it reads the injections.
	Quotes bool `json:"quotes"`
}

func loadRecorded(t *testing.T) []recorded {
	f, err := os.Open("testdata/recorded.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []recorded
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var r recorded
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// asResult is an MCP result as a provider returns it: its blocks, its
// structured content, and the text rendering of its text blocks.
func asResult(t *testing.T, raw json.RawMessage) *provider.Result {
	var r sdk.CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return &provider.Result{Text: strings.Join(text, "\n"), Content: r.Content, Structured: r.StructuredContent}
}

// count is findings by severity over a corpus, and the outputs with any.
type count struct {
	outputs, flagged, high, medium int
}

func (c *count) add(t *testing.T, name string, res *provider.Result) {
	c.outputs++
	resp := &pipeline.Response{Result: res}
	New(Options{Mode: Warn}).Apply("t", resp)
	if len(resp.ResultFindings) > 0 {
		c.flagged++
	}
	for _, f := range resp.ResultFindings {
		t.Logf("%s: %s %s in %s", name, f.Severity, f.Rule, f.Where)
		switch f.Severity {
		case "high":
			c.high++
			t.Errorf("high finding on a benign output %s: %s in %s", name, f.Rule, f.Where)
		case "medium":
			c.medium++
		}
	}
}

// TestFalsePositives: benign tool output raises no high finding (so
// redact and block change nothing); the rate of outputs with any finding
// (which warn annotates) is logged, for docs/result-guard.md:
//
//	go test -v -run TestFalsePositives ./internal/resultguard/ | grep -E 'outputs|high|medium'
func TestFalsePositives(t *testing.T) {
	var rec count
	quoting := 0
	for _, r := range loadRecorded(t) {
		if r.Quotes {
			quoting++
			resp := &pipeline.Response{Result: asResult(t, r.Result)}
			New(Options{Mode: Block}).Apply("t", resp)
			if resp.Err == nil {
				t.Errorf("%s quotes injections and was not blocked", r.Tool)
			}
			continue
		}
		rec.add(t, r.Source+" "+r.Tool, asResult(t, r.Result))
	}
	t.Logf("%d recorded outputs that quote injections on purpose: blocked", quoting)
	if rec.outputs < 50 {
		t.Fatalf("only %d recorded outputs", rec.outputs)
	}
	t.Logf("recorded outputs: %d outputs, %d flagged (%.1f%%): high %d, medium %d",
		rec.outputs, rec.flagged, 100*float64(rec.flagged)/float64(rec.outputs), rec.high, rec.medium)

	dir := os.Getenv("AGENT_TOOLS_DATASETS")
	if dir == "" {
		dir = "/work/shared/datasets"
	}
	var desc, schema count
	for _, set := range []string{"livemcpbench", "azure-mcp"} {
		f, err := os.Open(filepath.Join(dir, set, "tools.jsonl"))
		if err != nil {
			t.Skipf("the shared datasets are not here (%v); set AGENT_TOOLS_DATASETS", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var d struct {
				Server      string          `json:"server"`
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"input_schema"`
			}
			if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			desc.add(t, d.Server+"_"+d.Name+" description", &provider.Result{Text: d.Description})
			var v any
			if json.Unmarshal(d.InputSchema, &v) == nil {
				schema.add(t, d.Server+"_"+d.Name+" schema", &provider.Result{Text: "{}", Structured: v})
			}
		}
		f.Close()
	}
	if desc.outputs != 707 {
		t.Fatalf("%d dataset tools, want 707", desc.outputs)
	}
	t.Logf("707 dataset descriptions as text output: %d flagged (%.1f%%): high %d, medium %d",
		desc.flagged, 100*float64(desc.flagged)/float64(desc.outputs), desc.high, desc.medium)
	t.Logf("%d dataset input schemas as structured output: %d flagged (%.1f%%): high %d, medium %d",
		schema.outputs, schema.flagged, 100*float64(schema.flagged)/float64(schema.outputs), schema.high, schema.medium)
}
