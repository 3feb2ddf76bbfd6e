// Command contextcost measures what each exposure mode costs a model's
// context: the bytes and tokens of tools/list, and of the whole sequence an
// agent spends to find and call one tool (help → discover → call) versus flat
// mode, for synthetic catalogs of growing size and for the public data sets.
//
//	go run ./bench/contextcost [--json] [--datasets ../shared/datasets] [--recall=false]
//
// On the data sets' multi-tool tasks (--code) it compares code mode with
// progressive and search mode: the tokens a model reads and writes to find
// each needed tool, call it and pass its result on; and the per-call
// overhead of a tool call from a script against a direct call.
//
// On the data sets it also measures recall at the number of hits search
// actually returns (adaptive, index.DefaultCut) against fixed limits, at
// equal tokens: the fixed-limit recall interpolated at the adaptive mean
// token count.
//
// Tokens are counted with a real BPE tokenizer (o200k_base, embedded, offline).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// toolsPerProvider shapes the synthetic catalogs like typical MCP servers.
const toolsPerProvider = 50

type row struct {
	Catalog   string `json:"catalog"`
	Tools     int    `json:"tools"`
	Providers int    `json:"providers"`
	Mode      string `json:"mode"`
	// ListBytes/ListTokens: the tools/list result the client puts in context.
	ListBytes  int `json:"list_bytes"`
	ListTokens int `json:"list_tokens"`
	// FindCallTokens: tools/list plus every request and response needed to find
	// and call one tool (flat: the list plus the call).
	FindCallTokens int     `json:"find_and_call_tokens"`
	ListVsFlat     float64 `json:"list_vs_flat"`
	FindCallVsFlat float64 `json:"find_and_call_vs_flat"`
	// Progressive mode: whether its providers are grouped behind one
	// discover, and the tokens of a help call (request and result).
	Grouped    bool `json:"grouped,omitempty"`
	HelpTokens int  `json:"help_tokens,omitempty"`
}

// grouped reports whether a progressive facade lists one discover for all
// providers.
func grouped(cs *sdk.ClientSession) bool {
	res, err := cs.ListTools(context.Background(), &sdk.ListToolsParams{})
	if err != nil {
		fail(err)
	}
	for _, t := range res.Tools {
		if t.Name == "agent_tools_discover" {
			return true
		}
	}
	return false
}

func main() {
	asJSON := flag.Bool("json", false, "print rows as JSON (the last line is one JSON array)")
	datasets := flag.String("datasets", "../shared/datasets", "directory with livemcpbench/ and azure-mcp/ (skipped when absent)")
	withRecall := flag.Bool("recall", true, "also measure recall at equal tokens on the data sets")
	withCode := flag.Bool("code", true, "also measure code mode against progressive and search on the data sets' multi-tool tasks")
	sweep := flag.Bool("group-sweep", false, "only print progressive mode's tools/list tokens for the first n providers of each data set, ungrouped and grouped")
	flag.Parse()
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		fail(err)
	}
	count := func(b []byte) int { return len(enc.Encode(string(b), nil, nil)) }
	if *sweep {
		sweepGroup(os.Stdout, *datasets, count)
		return
	}
	defer reportMissing(os.Stderr, missingDatasets(*datasets)) // datasets.go: never drop rows without a word

	var rows []row
	for _, n := range []int{1, 10, 100, 1000, 10000} {
		rows = append(rows, measure(fmt.Sprintf("synthetic-%d", n), synthetic(n), count)...)
	}
	var recall []recallRow
	var code []codeRow
	for _, ds := range []string{"livemcpbench", "azure-mcp"} {
		provs, ids, err := loadDataset(filepath.Join(*datasets, ds, "tools.jsonl"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "contextcost: skipping %s: %v\n", ds, err)
			continue
		}
		rows = append(rows, measure(ds, provs, count)...)
		if *withRecall {
			qs, err := loadQueries(filepath.Join(*datasets, ds, "queries.jsonl"))
			if err != nil {
				fail(err)
			}
			recall = append(recall, measureRecall(ds, provs, ids, qs, count)...)
		}
		if *withCode {
			qs, err := loadQueries(filepath.Join(*datasets, ds, "queries.jsonl"))
			if err != nil {
				fail(err)
			}
			code = append(code, measureCode(ds, provs, ids, qs, count))
		}
	}
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"rows": rows, "recall": recall, "code": code})
		fmt.Println(string(b))
		return
	}
	if *withCode {
		defer printOverhead(os.Stdout, measureOverhead(200, count))
	}
	defer printCode(os.Stdout, code)
	defer printRecall(recall)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "catalog\ttools\tproviders\tmode\tlist bytes\tlist tokens\tfind+call tokens\tlist vs flat\tfind+call vs flat\thelp tokens\t")
	for _, r := range rows {
		mode := r.Mode
		if r.Grouped {
			mode += " (grouped)"
		}
		help := ""
		if r.HelpTokens > 0 {
			help = fmt.Sprint(r.HelpTokens)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\t%d\t%.2f%%\t%.2f%%\t%s\t\n", r.Catalog, r.Tools, r.Providers, mode,
			r.ListBytes, r.ListTokens, r.FindCallTokens, 100*r.ListVsFlat, 100*r.FindCallVsFlat, help)
	}
	tw.Flush()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "contextcost:", err)
	os.Exit(1)
}

// synthetic builds n tools spread over providers of toolsPerProvider.
func synthetic(n int) []*providertest.Fake {
	verbs := []string{"list", "get", "create", "update", "delete", "search", "export", "sync"}
	nouns := []string{"issue", "invoice", "customer", "deployment", "report", "ticket", "document", "order", "dataset", "alert"}
	var out []*providertest.Fake
	for i := 0; i < n; i++ {
		if i%toolsPerProvider == 0 {
			id := fmt.Sprintf("svc%d", len(out))
			out = append(out, providertest.New(catalog.ProviderInfo{ID: id, Description: "Synthetic service " + id + " for " + nouns[len(out)%len(nouns)] + " management", RequireConfirm: true}))
		}
		v, nn := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		name := fmt.Sprintf("%s_%s_%d", v, nn, i)
		desc := fmt.Sprintf("%s a %s in the service by its identifier, with optional filters for status, owner and date range; returns the matching records as JSON.", strings.ToUpper(v[:1])+v[1:], nn)
		schema := fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"The %s identifier"},"status":{"type":"string","enum":["open","closed","all"],"description":"Filter by status"},"owner":{"type":"string","description":"Filter by owner login"},"limit":{"type":"integer","description":"Maximum number of results"}},"required":["id"]}`, nn)
		p := out[len(out)-1]
		tools, _ := p.Tools(context.Background())
		p.SetTools(append(tools, providertest.Tool(name, desc, schema, v == "list" || v == "get" || v == "search"))...)
	}
	return out
}

type datasetTool struct {
	ID          string          `json:"id"`
	Server      string          `json:"server"`
	ServerDesc  string          `json:"server_description"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// loadDataset returns the data set's providers and, by provider id and
// tool name ("id\x00name"), each tool's data-set id.
func loadDataset(path string) ([]*providertest.Fake, map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	ids := map[string]string{}
	byServer := map[string]*providertest.Fake{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var t datasetTool
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			return nil, nil, err
		}
		id := providerID(t.Server)
		if _, dup := ids[id+"\x00"+t.Name]; !dup {
			ids[id+"\x00"+t.Name] = t.ID
		}
		p, ok := byServer[id]
		if !ok {
			p = providertest.New(catalog.ProviderInfo{ID: id, Description: t.ServerDesc, RequireConfirm: true})
			byServer[id] = p
			order = append(order, id)
		}
		if len(t.InputSchema) == 0 || string(t.InputSchema) == "null" {
			t.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		tools, _ := p.Tools(context.Background())
		p.SetTools(append(tools, providertest.Tool(t.Name, t.Description, string(t.InputSchema), true))...)
	}
	out := make([]*providertest.Fake, 0, len(order))
	for _, id := range order {
		out = append(out, byServer[id])
	}
	return out, ids, nil
}

// providerID turns a data set's server name into a config-style id.
func providerID(server string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(server) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "p"
	}
	return b.String()
}

// measure builds one runtime over the providers and measures every mode.
func measure(name string, provs []*providertest.Fake, count func([]byte) int) []row {
	reg := registry.New(nil)
	n := 0
	for _, p := range provs {
		p.Func = func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
			return &provider.Result{Text: `{"ok":true}`}, nil
		}
		if err := reg.Add(p); err != nil {
			fail(err)
		}
	}
	reg.Refresh(context.Background())
	all := reg.Tools("")
	n = len(all)
	if offered := offeredTools(provs); n < offered { // datasets.go
		fmt.Fprintf(os.Stderr, "contextcost: %s: %d of %d tools loaded; the registry rejected %d (their rows count only the loaded ones)\n", name, n, offered, offered-n)
	}
	target := all[len(all)/2] // the tool the agent needs
	query := target.Description
	if i := strings.IndexAny(query, ".;\n"); i > 0 {
		query = query[:i]
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{}})

	var rows []row
	var flat row
	for _, mode := range []facade.Mode{facade.Flat, facade.Progressive, facade.Search} {
		fac := facade.New(reg, run, facade.Options{Mode: mode})
		fac.Sync()
		cs, closeAll := connect(fac)
		// A client reads every page of tools/list into context.
		var listBytes, listTokens int
		params := &sdk.ListToolsParams{}
		for {
			page, err := cs.ListTools(context.Background(), params)
			if err != nil {
				fail(err)
			}
			b, _ := json.Marshal(page)
			listBytes, listTokens = listBytes+len(b), listTokens+count(b)
			if page.NextCursor == "" {
				break
			}
			params.Cursor = page.NextCursor
		}
		r := row{Catalog: name, Tools: n, Providers: len(provs), Mode: string(mode), ListBytes: listBytes, ListTokens: listTokens}
		steps := r.ListTokens
		args := map[string]any{"id": "42"}
		switch mode {
		case facade.Flat:
			steps += exchange(cs, target.Canonical, args, count)
		case facade.Progressive:
			r.HelpTokens = exchange(cs, "agent_tools_help", map[string]any{}, count)
			if grouped(cs) {
				// Providers grouped (above progressive.groupAbove): one
				// discover searches them all, as its description says, so
				// help is not on the path (its cost is reported beside).
				r.Grouped = true
				steps += exchange(cs, "agent_tools_discover", map[string]any{"query": query}, count)
				steps += exchange(cs, "agent_tools_call", map[string]any{"tool": target.Canonical, "arguments": args}, count)
				break
			}
			steps += r.HelpTokens
			steps += exchange(cs, "agent_tools_"+target.Provider+"_discover", map[string]any{"query": query}, count)
			steps += exchange(cs, "agent_tools_"+target.Provider+"_call", map[string]any{"toolName": target.Name, "arguments": args}, count)
		case facade.Search:
			steps += exchange(cs, "agent_tools_search", map[string]any{"query": query}, count)
			steps += exchange(cs, "agent_tools_call", map[string]any{"tool": target.Canonical, "arguments": args}, count)
		}
		r.FindCallTokens = steps
		closeAll()
		if mode == facade.Flat {
			flat = r
		}
		r.ListVsFlat = float64(r.ListTokens) / float64(flat.ListTokens)
		r.FindCallVsFlat = float64(r.FindCallTokens) / float64(flat.FindCallTokens)
		rows = append(rows, r)
	}
	return rows
}

// exchange calls a tool and returns the tokens of the request and its result.
func exchange(cs *sdk.ClientSession, name string, args map[string]any, count func([]byte) int) int {
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		fail(fmt.Errorf("%s: %w", name, err))
	}
	req, _ := json.Marshal(params)
	out, _ := json.Marshal(res)
	return count(req) + count(out)
}

func connect(fac *facade.Facade) (*sdk.ClientSession, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	ct, st := sdk.NewInMemoryTransports()
	ss, err := fac.Server().Connect(ctx, st, nil)
	if err != nil {
		fail(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "contextcost", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fail(err)
	}
	return cs, func() { cs.Close(); ss.Close(); cancel() }
}
