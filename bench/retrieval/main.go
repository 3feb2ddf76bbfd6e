// Command retrieval measures discovery quality on a tool-retrieval data set
// (format: shared/datasets/README.md) through exactly the production index
// (internal/index): the same tokenizer, fields, weights and ranking that
// discover and search use.
//
//	go run ./bench/retrieval --dataset ../shared/datasets/livemcpbench
//	go run ./bench/retrieval --tools T.jsonl --queries Q.jsonl --k 1,5,10 --json
//	go run ./bench/retrieval --ablate --dataset ../shared/datasets/livemcpbench,../shared/datasets/azure-mcp
//	go run ./bench/retrieval --dataset ../shared/datasets/livemcpbench --embed fake --set fusion=blend,semw=0.3
//	go run ./bench/retrieval --dataset ../shared/datasets/azure-mcp --embed http://127.0.0.1:8765/v1/embeddings --model use-lite --cache vec.bin
//	go run -tags onnx ./bench/retrieval --dataset ../shared/datasets/azure-mcp --model ./models/bge-small --cache vec.bin
//
// With --embed (a URL, "fake" or "noise") or --model DIR (a model folder
// run in process, as index.semantic.model) it reports side by side the
// lexical ranking, the model alone, the fusion at the configured weight
// (semw, default 1) and the fusion at the weight the runtime's self-check
// chooses (internal/embedding calibrate.go), with the self-check's figures.
// embedserver/serve.mjs serves a small real model (USE lite) locally. With
// a model folder it also reports the model's cost: the time to embed the
// tools and a query's embedding latency.
//
// Each tool's server becomes its provider; every query is run with
// index.Search(query, Options{Limit: 50}).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/embedding"
	"github.com/agent-tools/agent-tools/internal/embedding/localmodel"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/index/cjk"
	"github.com/agent-tools/agent-tools/internal/tests/embedtest"
)

type toolRec struct {
	ID                string          `json:"id"`
	Server            string          `json:"server"`
	ServerDescription string          `json:"server_description"`
	Name              string          `json:"name"`
	Description       string          `json:"description"`
	InputSchema       json.RawMessage `json:"input_schema"`
}

type queryRec struct {
	ID    string     `json:"id"`
	Query string     `json:"query"`
	Needs [][]string `json:"needs"`
}

type dataset struct {
	name    string
	tools   []toolRec
	queries []queryRec
}

type report struct {
	Recall   map[int]float64
	Complete float64
	MRR      float64
	// CJKRecall10: recall@10 over the needs whose every acceptable tool is
	// described in Chinese (CJKNeeds of them).
	CJKRecall10 float64
	CJKNeeds    int
	// CutRecall: recall at the adaptive hit count (index.DefaultCut,
	// without the token budget); MeanCut: the mean count.
	CutRecall, MeanCut float64
	BuildMS            float64
	P50US              float64
	P99US              float64
	Results            []queryResult
	// Stage is the semantic stage's state after the run (its weight and
	// self-check), when there is one; SyncMS the wait until its tools were
	// embedded (and the self-check had run).
	Stage  embedding.Status
	SyncMS float64
}

const usage = `usage: go run ./bench/retrieval (--dataset DIR | --tools FILE --queries FILE) [flags]

Measures recall@k, complete@5, MRR, build time and query latency of the
production index on a tool-retrieval data set (shared/datasets/README.md).
DIR holds tools.jsonl and queries.jsonl, e.g. ../shared/datasets/livemcpbench
when run from the repository root.

flags:
`

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("retrieval", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	toolsF := fs.String("tools", "", "tools.jsonl `file`")
	queriesF := fs.String("queries", "", "queries.jsonl `file`")
	dsF := fs.String("dataset", "", "`dir` holding tools.jsonl and queries.jsonl (comma-separated list allowed with --ablate)")
	kF := fs.String("k", "1,5,10", "comma-separated cut-offs for recall@k")
	jsonF := fs.Bool("json", false, "end with one JSON line of the figures")
	ablate := fs.Bool("ablate", false, "print the ablation table: each technique switched off (or on) in turn")
	set := fs.String("set", "", "override index.Config: comma-separated key=value (see --set help)")
	verbose := fs.Int("miss", 0, "print each query's needs that are not in the top `K` (debugging)")
	dump := fs.String("dump", "", "write each query's ranking (top 50) as JSON lines to `file` (debugging)")
	embedF := fs.String("embed", "", "fuse an embeddings endpoint: `URL` of /v1/embeddings or /api/embed, \"fake\" for the deterministic fake (embedtest), or \"noise\" for pseudo-random vectors per text; reports lexical, model, fused at the default weight and fused at the self-check's weight side by side")
	modelF := fs.String("model", "", "with --embed URL: the endpoint's model name; alone: a model `DIR` run in process (index.semantic.model: a Hugging Face ONNX export with model.onnx and tokenizer.json; needs go run -tags onnx), reported like --embed")
	cacheF := fs.String("cache", "", "vector cache `file` shared by the runs (with --embed; default in memory)")
	cutF := fs.String("cut", "", "adaptive cut `ratio,min,max` (default index.DefaultCut)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *set == "help" {
		fmt.Fprintln(stdout, "--set keys:", strings.Join(configKeys(), " "))
		return nil
	}
	ks, err := parseKs(*kF)
	if err != nil {
		return err
	}
	var dirs []string
	if *dsF != "" {
		dirs = strings.Split(*dsF, ",")
	}
	var sets []dataset
	switch {
	case len(dirs) > 0 && (*toolsF != "" || *queriesF != ""):
		return errors.New("give either --dataset or --tools/--queries, not both")
	case len(dirs) > 0:
		if len(dirs) > 1 && !*ablate {
			return errors.New("several data sets are only accepted with --ablate")
		}
		for _, d := range dirs {
			ds, err := loadDataset(filepath.Join(d, "tools.jsonl"), filepath.Join(d, "queries.jsonl"))
			if err != nil {
				return err
			}
			ds.name = filepath.Base(filepath.Clean(d))
			sets = append(sets, ds)
		}
	case *toolsF != "" && *queriesF != "":
		ds, err := loadDataset(*toolsF, *queriesF)
		if err != nil {
			return err
		}
		ds.name = filepath.Base(filepath.Dir(*toolsF))
		sets = append(sets, ds)
	default:
		fs.Usage()
		return errors.New("missing data: give --dataset DIR or both --tools and --queries")
	}
	cfg := index.DefaultConfig()
	if err := applySet(&cfg, *set); err != nil {
		return err
	}
	if *cutF != "" {
		if _, err := fmt.Sscanf(*cutF, "%g,%d,%d", &cutOpts.Ratio, &cutOpts.Min, &cutOpts.Max); err != nil {
			return fmt.Errorf("--cut: want ratio,min,max: %v", err)
		}
	}
	sem, emb, closeSem, err := semanticFactory(*embedF, *modelF, *cacheF)
	if err != nil {
		return err
	}
	defer closeSem()
	var local embedding.Embedder // a model folder: its cost is reported
	if *embedF == "" {
		local = emb
	}
	if *ablate {
		return runAblation(stdout, sets, cfg)
	}
	ds := sets[0]
	if sem != nil {
		return runCompare(stdout, ds, cfg, ks, sem, local, *jsonF)
	}
	rep := evaluate(ds, cfg, ks, nil)
	fmt.Fprintf(stdout, "data set %s: %d tools, %d providers, %d queries\n", ds.name, len(ds.tools), countServers(ds), len(ds.queries))
	for _, k := range ks {
		fmt.Fprintf(stdout, "recall@%-3d %.3f\n", k, rep.Recall[k])
	}
	fmt.Fprintf(stdout, "complete@5 %.3f\n", rep.Complete)
	fmt.Fprintf(stdout, "MRR        %.3f\n", rep.MRR)
	if rep.CJKNeeds > 0 {
		fmt.Fprintf(stdout, "recall@10 of the %d needs described in Chinese: %.3f\n", rep.CJKNeeds, rep.CJKRecall10)
	}
	fmt.Fprintf(stdout, "recall at the adaptive hit count %.3f (mean %.1f hits)\n", rep.CutRecall, rep.MeanCut)
	fmt.Fprintf(stdout, "build      %.1f ms\n", rep.BuildMS)
	fmt.Fprintf(stdout, "query p50  %.0f µs   p99 %.0f µs\n", rep.P50US, rep.P99US)
	if *verbose > 0 {
		for i, r := range rep.Results {
			fa := foundAt(r)
			var miss []string
			for j, p := range fa {
				if p == 0 || p > *verbose {
					miss = append(miss, fmt.Sprintf("%s@%d", r.Needs[j][0], p))
				}
			}
			if len(miss) > 0 {
				top := r.Ranked
				if len(top) > 5 {
					top = top[:5]
				}
				fmt.Fprintf(stdout, "\nQ %s\n  missed: %s\n  top5: %s\n", ds.queries[i].Query, strings.Join(miss, " "), strings.Join(top, " | "))
			}
		}
	}
	if *dump != "" {
		if err := writeDump(*dump, ds, rep); err != nil {
			return err
		}
	}
	if *jsonF {
		out := map[string]float64{
			"recall_at_1":   rep.recallOr(1),
			"recall_at_5":   rep.recallOr(5),
			"recall_at_10":  rep.recallOr(10),
			"complete_at_5": rep.Complete,
			"mrr":           rep.MRR,
			"build_ms":      rep.BuildMS,
			"query_p50_us":  rep.P50US,
			"query_p99_us":  rep.P99US,
			"recall_at_cut": rep.CutRecall,
			"mean_cut":      rep.MeanCut,
		}
		if rep.CJKNeeds > 0 {
			out["cjk_recall_at_10"] = rep.CJKRecall10
		}
		b, _ := json.Marshal(out)
		fmt.Fprintln(stdout, string(b))
	}
	return nil
}

func (r report) recallOr(k int) float64 {
	if v, ok := r.Recall[k]; ok {
		return v
	}
	return recallAt(r.Results, k)
}

func parseKs(s string) ([]int, error) {
	var ks []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		k, err := strconv.Atoi(p)
		if err != nil || k <= 0 {
			return nil, fmt.Errorf("bad --k value %q", p)
		}
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, errors.New("--k needs at least one cut-off")
	}
	return ks, nil
}

func loadDataset(toolsPath, queriesPath string) (dataset, error) {
	var ds dataset
	if err := readJSONL(toolsPath, func(b []byte) error {
		var t toolRec
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		ds.tools = append(ds.tools, t)
		return nil
	}); err != nil {
		return ds, err
	}
	if err := readJSONL(queriesPath, func(b []byte) error {
		var q queryRec
		if err := json.Unmarshal(b, &q); err != nil {
			return err
		}
		ds.queries = append(ds.queries, q)
		return nil
	}); err != nil {
		return ds, err
	}
	if len(ds.tools) == 0 || len(ds.queries) == 0 {
		return ds, fmt.Errorf("%s / %s: no tools or no queries", toolsPath, queriesPath)
	}
	return ds, nil
}

func readJSONL(path string, each func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		if err := each(b); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	return sc.Err()
}

func countServers(ds dataset) int {
	m := map[string]bool{}
	for _, t := range ds.tools {
		m[t.Server] = true
	}
	return len(m)
}

// docsByProvider turns the data set's tools into index documents, one
// provider per server, in first-seen order.
func docsByProvider(ds dataset) ([]string, map[string][]index.Doc) {
	var order []string
	by := map[string][]index.Doc{}
	for _, t := range ds.tools {
		if _, ok := by[t.Server]; !ok {
			order = append(order, t.Server)
		}
		by[t.Server] = append(by[t.Server], index.Doc{
			ID:                  t.ID,
			Kind:                "tool",
			Provider:            t.Server,
			ProviderDescription: t.ServerDescription,
			Name:                t.Name,
			Description:         t.Description,
			Params:              index.ParamsFromSchema(t.InputSchema),
		})
	}
	return order, by
}

// cutOpts is the adaptive cut measured (--cut).
var cutOpts = index.DefaultCut

// newSemantic makes a fresh semantic stage for one index (nil: none):
// fused at cfg.SemanticWeight (fixed), or at the weight its self-check
// chooses; the function returned waits until every tool is embedded (and
// the self-check has run).
type newSemantic func(cfg index.Config, calibrated bool) (*embedding.Store, func() error)

// evaluate measures the index with cfg, fused with sem's stage at
// cfg.SemanticWeight when sem is not nil.
func evaluate(ds dataset, cfg index.Config, ks []int, sem newSemantic) report {
	return evaluateWith(ds, cfg, ks, sem, stageFixed)
}

// How evaluateWith uses the semantic stage.
const (
	stageFixed      = iota // fused at cfg.SemanticWeight
	stageCalibrated        // fused at the self-check's weight
	stageModelOnly         // the model's ranking alone
)

func evaluateWith(ds dataset, cfg index.Config, ks []int, sem newSemantic, use int) report {
	order, by := docsByProvider(ds)
	start := time.Now()
	ix := index.NewWithConfig(cfg)
	var syncSem func() error
	var st *embedding.Store
	if sem != nil {
		st, syncSem = sem(cfg, use == stageCalibrated)
		ix.SetSemantic(st)
		defer st.Close()
	}
	search := func(q string) []index.Hit {
		if use == stageModelOnly && st != nil {
			hs, err := st.Similar(q, index.Options{}, mrrDepth)
			if err != nil {
				fmt.Fprintln(os.Stderr, "retrieval: model ranking failed:", err)
			}
			return hs
		}
		return ix.Search(q, index.Options{Limit: mrrDepth})
	}
	for _, p := range order {
		ix.Replace(p, by[p])
	}
	build := time.Since(start)
	var embedTime time.Duration
	if syncSem != nil {
		t0 := time.Now()
		if err := syncSem(); err != nil {
			fmt.Fprintln(os.Stderr, "retrieval: embeddings not ready, ranking lexically:", err)
		}
		embedTime = time.Since(t0)
	}

	rep := report{Recall: map[int]float64{}, BuildMS: float64(build.Microseconds()) / 1000, SyncMS: float64(embedTime.Milliseconds())}
	if st != nil {
		rep.Stage = st.Status()
	}
	// One untimed warm-up pass (caches, pools), then the timed pass.
	for _, q := range ds.queries {
		search(q.Query)
	}
	lat := make([]time.Duration, 0, len(ds.queries))
	var cutResults []queryResult
	var cutSum int
	for _, q := range ds.queries {
		t0 := time.Now()
		hits := search(q.Query)
		lat = append(lat, time.Since(t0))
		ids := make([]string, len(hits))
		scores := make([]float64, len(hits))
		for i, h := range hits {
			ids[i], scores[i] = h.ID, h.Score
		}
		rep.Results = append(rep.Results, queryResult{Needs: q.Needs, Ranked: ids})
		n := index.Cut(scores, cutOpts)
		cutSum += n
		cutResults = append(cutResults, queryResult{Needs: q.Needs, Ranked: ids[:n]})
	}
	for _, k := range ks {
		rep.Recall[k] = recallAt(rep.Results, k)
	}
	rep.Complete = completeAt(rep.Results, 5)
	rep.MRR = mrr(rep.Results)
	rep.CutRecall = recallAt(cutResults, mrrDepth)
	rep.MeanCut = float64(cutSum) / float64(len(ds.queries))
	rep.CJKRecall10, rep.CJKNeeds = cjkRecall(ds, rep.Results, 10)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	rep.P50US = percentile(lat, 0.50)
	rep.P99US = percentile(lat, 0.99)
	return rep
}

// cjkRecall is recall@k over the needs whose every acceptable tool has a
// description with Chinese characters.
func cjkRecall(ds dataset, rs []queryResult, k int) (float64, int) {
	chinese := map[string]bool{}
	for _, t := range ds.tools {
		chinese[t.ID] = cjk.HasHan(t.Description)
	}
	found, n := 0, 0
	for _, r := range rs {
		at := foundAt(r)
		for i, need := range r.Needs {
			all := len(need) > 0
			for _, id := range need {
				all = all && chinese[id]
			}
			if !all {
				continue
			}
			n++
			if at[i] > 0 && at[i] <= k {
				found++
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(found) / float64(n), n
}

// semanticFactory turns --embed into a factory of semantic stages: "" none,
// "fake" the deterministic fake endpoint on 127.0.0.1, "noise" a model
// that knows nothing (pseudo-random vectors per text, in process), else a
// real URL; or, without --embed, --model DIR: the model folder run in
// process (localmodel, as index.semantic.model). Every stage shares one
// vector cache (cachePath, "" in memory), so each text is embedded once per
// run. The embedder is returned too, for timing a model folder's queries.
func semanticFactory(spec, model, cachePath string) (newSemantic, embedding.Embedder, func(), error) {
	if spec == "" && model == "" {
		return nil, nil, func() {}, nil
	}
	closeAll := func() {}
	var emb embedding.Embedder
	batch := 0
	switch spec {
	case "":
		m, err := localmodel.Open(model)
		if err != nil {
			return nil, nil, nil, err
		}
		closeAll = func() { m.Close() }
		if err := m.Wait(context.Background()); err != nil {
			closeAll()
			return nil, nil, nil, err
		}
		emb, model, batch = m, m.Spec().ID, 16
	case "noise":
		emb = embedtest.Func(embedtest.Noise)
	default:
		url := spec
		if spec == "fake" {
			srv := embedtest.New()
			closeAll = srv.Close
			url = srv.URL + "/v1/embeddings"
		}
		if model == "" {
			model = "fake"
		}
		c, err := embedding.NewClient(url, model, nil, nil)
		if err != nil {
			closeAll()
			return nil, nil, nil, err
		}
		emb = c
	}
	cache, err := embedding.OpenCache(cachePath)
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	closeFn := func() { cache.Close(); closeAll() }
	return func(cfg index.Config, calibrated bool) (*embedding.Store, func() error) {
		o := embedding.Options{Model: model, QueryTimeout: time.Minute, BatchTimeout: 10 * time.Minute, BatchSize: batch,
			Cache: cache, SharedCache: true, Index: cfg, CalibrationDelay: time.Millisecond}
		if !calibrated {
			w := cfg.SemanticWeight
			o.Weight = &w
		}
		st := embedding.NewStore(emb, o)
		return st, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
			defer cancel()
			return st.Sync(ctx)
		}
	}, emb, closeFn, nil
}

// percentile returns the nearest-rank percentile of sorted durations, in µs.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i].Nanoseconds()) / 1000
}

// writeDump writes one JSON line per query: its id, text, needs, the rank
// of each need (0 = not in the top 50) and the ranked ids.
func writeDump(path string, ds dataset, rep report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i, r := range rep.Results {
		b, _ := json.Marshal(map[string]any{
			"id": ds.queries[i].ID, "query": ds.queries[i].Query, "needs": r.Needs,
			"found_at": foundAt(r), "ranked": r.Ranked,
		})
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// compareRow is one ranking of runCompare's table.
type compareRow struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
	R1     float64 `json:"recall_at_1"`
	R5     float64 `json:"recall_at_5"`
	R10    float64 `json:"recall_at_10"`
	C5     float64 `json:"complete_at_5"`
	MRR    float64 `json:"mrr"`
}

// runCompare measures, side by side on one data set: the lexical ranking,
// the model alone, the fusion at the configured (default) weight, and the
// fusion at the weight the self-check chooses.
// With a model folder (local) it also reports the model's cost.
func runCompare(w io.Writer, ds dataset, cfg index.Config, ks []int, sem newSemantic, local embedding.Embedder, asJSON bool) error {
	lex := evaluate(ds, cfg, ks, nil)
	model := evaluateWith(ds, cfg, ks, sem, stageModelOnly)
	fixed := evaluateWith(ds, cfg, ks, sem, stageFixed)
	cal := evaluateWith(ds, cfg, ks, sem, stageCalibrated)
	row := func(name string, weight float64, r report) compareRow {
		return compareRow{name, weight, r.recallOr(1), r.recallOr(5), r.recallOr(10), r.Complete, r.MRR}
	}
	rows := []compareRow{
		row("lexical", 0, lex),
		row("model alone", 0, model),
		row("fused, default weight", cfg.SemanticWeight, fixed),
		row("fused, self-check's weight", cal.Stage.Weight, cal),
	}
	fmt.Fprintf(w, "data set %s: %d tools, %d providers, %d queries (fusion %s, k %g)\n", ds.name, len(ds.tools), countServers(ds), len(ds.queries), cfg.SemanticFusion, cfg.SemanticRRFK)
	fmt.Fprintf(w, "| ranking | weight | R@1 | R@5 | R@10 | complete@5 | MRR |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %g | %.3f | %.3f | %.3f | %.3f | %.3f |\n", r.Name, r.Weight, r.R1, r.R5, r.R10, r.C5, r.MRR)
	}
	if c := cal.Stage.SelfCheck; c != nil {
		fmt.Fprintf(w, "%s\n", c.Summary())
		for _, f := range c.Fused {
			fmt.Fprintf(w, "  self-check at weight %g: %s\n", f.Weight, f.Figures)
		}
	}
	var cost *modelCost
	if local != nil {
		c := measureModel(local, ds, model.SyncMS, cal.SyncMS, lex)
		cost = &c
		fmt.Fprintf(w, "model cost: %d tools embedded in %.1f s (%.0f ms a tool; 0 when --cache had them); self-check run in %.1f s; "+
			"a query embedded in p50 %.0f ms, p99 %.0f ms (%d queries, one at a time); lexical search p50 %.0f µs, p99 %.0f µs\n",
			len(ds.tools), c.EmbedToolsMS/1000, c.EmbedToolsMS/float64(len(ds.tools)), c.SelfCheckMS/1000, c.QueryP50MS, c.QueryP99MS, c.Queries, c.LexicalP50US, c.LexicalP99US)
	}
	if asJSON {
		out := map[string]any{"dataset": ds.name, "rows": rows}
		if c := cal.Stage.SelfCheck; c != nil {
			out["self_check"] = c
		}
		if cost != nil {
			out["model_cost"] = cost
		}
		b, _ := json.Marshal(out)
		fmt.Fprintln(w, string(b))
	}
	return nil
}

// modelCost is what a model folder costs on a data set.
type modelCost struct {
	EmbedToolsMS float64 `json:"embed_tools_ms"` // every tool, in the store's background batches
	SelfCheckMS  float64 `json:"self_check_ms"`  // the self-check (its texts embedded, the rankings scored)
	Queries      int     `json:"queries"`
	QueryP50MS   float64 `json:"query_p50_ms"` // one query embedded, uncached
	QueryP99MS   float64 `json:"query_p99_ms"`
	LexicalP50US float64 `json:"lexical_p50_us"`
	LexicalP99US float64 `json:"lexical_p99_us"`
}

// measureModel times up to 100 of the data set's queries embedded one at a
// time by the model itself (the store's query cache bypassed).
func measureModel(emb embedding.Embedder, ds dataset, toolsMS, calMS float64, lex report) modelCost {
	var lat []time.Duration
	for _, q := range ds.queries[:min(100, len(ds.queries))] {
		t0 := time.Now()
		if _, err := emb.Embed(context.Background(), []string{q.Query}); err != nil {
			fmt.Fprintln(os.Stderr, "retrieval: embedding a query:", err)
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return modelCost{EmbedToolsMS: toolsMS, SelfCheckMS: calMS, Queries: len(lat),
		QueryP50MS: percentile(lat, 0.5) / 1000, QueryP99MS: percentile(lat, 0.99) / 1000,
		LexicalP50US: lex.P50US, LexicalP99US: lex.P99US}
}
