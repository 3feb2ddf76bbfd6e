// Command load measures agent-tools over Streamable HTTP under concurrent
// sessions, side by side with a bare go-sdk server doing the same work in
// the same run (throughput of in-process tools over HTTP; docs/measured.md).
//
// Both servers listen on 127.0.0.1 (loopback only) and serve one cheap
// in-process tool that echoes its argument. agent-tools serves it through
// its whole stack: the HTTP guards, bearer-token auth, the facade (flat
// mode), the pipeline (audit to io.Discard, metrics, loop guard, schema
// validation, policy, deadline) and the provider call. The bare server is
// mcp.NewServer + mcp.NewStreamableHTTPHandler with the same handler.
//
// N sessions connect (the go-sdk client, each with its standalone SSE
// stream, as real clients keep), then all of them make M sequential calls at
// once. Throughput is calls per second of wall time over that phase;
// latencies are per call. Rounds alternate bare / agent-tools to spread
// noise; the run is bounded by -timeout.
//
//	go run ./bench/load -sessions 500 -calls 20 -rounds 2
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/transport"
)

const benchToken = "load-bench-token"

func main() {
	sessions := flag.Int("sessions", 500, "concurrent MCP sessions")
	calls := flag.Int("calls", 20, "sequential tool calls per session")
	rounds := flag.Int("rounds", 2, "rounds (each runs bare, then agent-tools)")
	timeout := flag.Duration("timeout", 5*time.Minute, "bound on the whole run")
	noAuth := flag.Bool("no-auth", false, "serve agent-tools without bearer-token auth")
	jsonOut := flag.Bool("json", false, "print the results as JSON")
	only := flag.String("only", "", `run one side only: "bare" or "agent-tools" (for profiling)`)
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *sessions < 1 || *calls < 1 || *rounds < 1 || *sessions > 5000 || *calls > 10000 {
		fmt.Fprintln(os.Stderr, "load: want 1 ≤ sessions ≤ 5000, 1 ≤ calls ≤ 10000, rounds ≥ 1")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	bare, stopBare, err := serveBare()
	if err != nil {
		fail(err)
	}
	defer stopBare()
	at, stopAT, err := serveAgentTools(ctx, !*noAuth)
	if err != nil {
		fail(err)
	}
	defer stopAT()

	token := ""
	if !*noAuth {
		token = benchToken
	}
	// Both sides' clients send the token (the bare server ignores it): the
	// client's cost of adding the header (a request clone per POST) is then
	// the same on both sides, and what differs is the servers' own work,
	// agent-tools' check of the token included.
	targets := []target{
		{name: "bare go-sdk", url: bare, tool: "echo", token: token},
		{name: "agent-tools", url: at, tool: "bench_echo", token: token},
	}
	switch *only {
	case "":
	case "bare":
		targets = targets[:1]
	case "agent-tools":
		targets = targets[1:]
	default:
		fail(fmt.Errorf("-only %q: want bare or agent-tools", *only))
	}
	totals := make([]result, len(targets))
	var ratios []float64
	for r := 0; r < *rounds; r++ {
		var tp []float64
		for i, tg := range targets {
			res := run(ctx, tg, *sessions, *calls)
			if !*jsonOut {
				fmt.Fprintf(os.Stderr, "round %d %-12s %s\n", r+1, tg.name, res.line())
			}
			totals[i].add(res)
			tp = append(tp, res.throughput())
		}
		if len(tp) == 2 && tp[0] > 0 {
			ratios = append(ratios, tp[1]/tp[0])
		}
	}
	report(totals, targets, *sessions, *calls, *rounds, median(ratios), *jsonOut)
	for _, t := range totals {
		if t.Errors > 0 {
			pprof.StopCPUProfile()
			os.Exit(1)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "load:", err)
	os.Exit(1)
}

// echo is the work both servers do.
func echo(args json.RawMessage) (string, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return "", err
	}
	return a.Text, nil
}

var echoSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"],"additionalProperties":false}`)

func listen() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // loopback only
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String() + "/mcp", nil
}

func serveBare() (string, func(), error) {
	s := sdk.NewServer(&sdk.Implementation{Name: "bare", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echo text.", InputSchema: echoSchema}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		text, err := echo(req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	ln, url, err := listen()
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }() // ErrServerClosed at Close
	return url, func() { srv.Close() }, nil
}

// benchProvider is the same echo as an agent-tools in-process provider.
type benchProvider struct{ tools []catalog.Tool }

func (p *benchProvider) Info() catalog.ProviderInfo {
	return catalog.ProviderInfo{ID: "bench", Kind: "native", Description: "Load benchmark tools", RequireConfirm: true}
}

func (p *benchProvider) Tools(context.Context) ([]catalog.Tool, error) { return p.tools, nil }

// Fresh: the tools are fixed, as for any provider whose list changes only
// through its own signal (provider.Fresher); calls then re-list nothing.
func (p *benchProvider) Fresh() bool { return true }

func (p *benchProvider) Call(_ context.Context, _ catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	text, err := echo(args)
	if err != nil {
		return nil, err
	}
	return &provider.Result{Text: text}, nil
}

func serveAgentTools(ctx context.Context, auth bool) (string, func(), error) {
	dir, err := os.MkdirTemp("", "agent-tools-load-")
	if err != nil {
		return "", nil, err
	}
	p := &benchProvider{tools: []catalog.Tool{{Provider: "bench", Name: "echo", Description: "Echo text.", InputSchema: echoSchema, ReadOnly: true}}}
	m := metrics.New()
	drain := transport.NewDrain()
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.New(ctx, app.Options{
		ProjectDir: dir, Mode: "flat", AuditDefault: io.Discard, Logger: log,
		Providers: []provider.Provider{p}, Middleware: []pipeline.Middleware{m.Middleware(), drain.Middleware()},
	})
	if err != nil {
		return "", nil, err
	}
	var tokens []string
	if auth {
		tokens = []string{benchToken}
	}
	ln, url, err := listen()
	if err != nil {
		return "", nil, err
	}
	h, err := transport.NewHTTP(transport.HTTPOptions{
		Server: a.Facade.Server(), Addr: ln.Addr().String(), Tokens: tokens,
		RatePerSecond: -1, // a per-token limit would measure the limiter
		Drain:         drain, Metrics: m, Logger: log,
	})
	if err != nil {
		return "", nil, err
	}
	m.WatchSessions(h.Sessions)
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = h.Serve(sctx, ln); close(done) }() // ends when stop cancels sctx
	return url, func() { stop(); <-done; a.Close(); os.RemoveAll(dir) }, nil
}

type target struct {
	name, url, tool, token string
}

type result struct {
	CPU        time.Duration `json:"cpu_ns"` // process CPU (user+sys) during the call phase, client included
	Calls      int           `json:"calls"`
	Errors     int           `json:"errors"`
	Wall       time.Duration `json:"wall_ns"`
	Connect    time.Duration `json:"connect_ns"`
	latencies  []time.Duration
	FirstError string `json:"first_error,omitempty"`
}

func (r *result) add(o result) {
	r.Calls += o.Calls
	r.Errors += o.Errors
	r.Wall += o.Wall
	r.Connect += o.Connect
	r.CPU += o.CPU
	r.latencies = append(r.latencies, o.latencies...)
	if r.FirstError == "" {
		r.FirstError = o.FirstError
	}
}

func (r result) throughput() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Calls) / r.Wall.Seconds()
}

func (r result) cpuPerCall() time.Duration {
	if r.Calls == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Calls)
}

func (r result) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	l := append([]time.Duration(nil), r.latencies...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	i := int(p * float64(len(l)-1))
	return l[i]
}

func (r result) line() string {
	s := fmt.Sprintf("%6d calls  %5d errors  %6.0f calls/s  p50 %-9s p99 %-9s cpu/call %-7s connect %s",
		r.Calls, r.Errors, r.throughput(), r.pct(.5).Round(10*time.Microsecond), r.pct(.99).Round(10*time.Microsecond),
		r.cpuPerCall().Round(time.Microsecond), r.Connect.Round(time.Millisecond))
	if r.FirstError != "" {
		s += "  first error: " + r.FirstError
	}
	return s
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

// run connects n sessions, then makes m calls on each concurrently.
func run(ctx context.Context, tg target, n, m int) result {
	tr := &http.Transport{MaxIdleConns: 4 * n, MaxIdleConnsPerHost: 4 * n, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: bearer{tg.token, tr}}
	client := sdk.NewClient(&sdk.Implementation{Name: "load", Version: "1"}, nil)

	var res result
	var mu sync.Mutex
	var errs atomic.Int64
	fail := func(err error) {
		if errs.Add(1) == 1 {
			mu.Lock()
			res.FirstError = err.Error()
			mu.Unlock()
		}
	}
	start := time.Now()
	sessions := make([]*sdk.ClientSession, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64) // bound concurrent handshakes
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: tg.url, HTTPClient: hc, MaxRetries: -1}, nil)
			if err != nil {
				fail(fmt.Errorf("connect: %w", err))
				return
			}
			sessions[i] = cs
		}()
	}
	wg.Wait()
	res.Connect = time.Since(start)

	lat := make([][]time.Duration, n)
	startCPU := cpuTime()
	startCalls := time.Now()
	for i, cs := range sessions {
		if cs == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := make([]time.Duration, 0, m)
			for j := 0; j < m && ctx.Err() == nil; j++ {
				t0 := time.Now()
				text := fmt.Sprintf("s%d-c%d", i, j)
				r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tg.tool, Arguments: map[string]any{"text": text}})
				l = append(l, time.Since(t0))
				switch {
				case err != nil:
					fail(err)
				case r.IsError || len(r.Content) != 1 || r.Content[0].(*sdk.TextContent).Text != text:
					b, _ := json.Marshal(r)
					fail(errors.New("wrong result: " + string(b)))
				}
			}
			lat[i] = l
		}()
	}
	wg.Wait()
	res.Wall = time.Since(startCalls)
	res.CPU = cpuTime() - startCPU
	for _, l := range lat {
		res.Calls += len(l)
		res.latencies = append(res.latencies, l...)
	}
	res.Errors = int(errs.Load())
	for _, cs := range sessions {
		if cs != nil {
			cs.Close()
		}
	}
	return res
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	x = append([]float64(nil), x...)
	sort.Float64s(x)
	if len(x)%2 == 1 {
		return x[len(x)/2]
	}
	return (x[len(x)/2-1] + x[len(x)/2]) / 2
}

func report(totals []result, targets []target, n, m, rounds int, medianRatio float64, asJSON bool) {
	ratio := 0.0
	if len(totals) == 2 && totals[0].throughput() > 0 {
		ratio = totals[1].throughput() / totals[0].throughput()
	}
	if asJSON {
		out := map[string]any{"sessions": n, "calls_per_session": m, "rounds": rounds, "cpus": runtime.NumCPU(), "ratio": ratio, "median_round_ratio": medianRatio}
		for i, tg := range targets {
			t := totals[i]
			out[tg.name] = map[string]any{
				"calls": t.Calls, "errors": t.Errors, "calls_per_sec": t.throughput(),
				"p50_ms": float64(t.pct(.5).Microseconds()) / 1000, "p99_ms": float64(t.pct(.99).Microseconds()) / 1000,
				"cpu_us_per_call": float64(t.cpuPerCall().Nanoseconds()) / 1000,
				"first_error":     t.FirstError,
			}
		}
		if len(totals) == 2 && totals[0].cpuPerCall() > 0 {
			out["cpu_ratio"] = float64(totals[1].cpuPerCall()) / float64(totals[0].cpuPerCall())
		}
		json.NewEncoder(os.Stdout).Encode(out)
		return
	}
	fmt.Printf("load: %d sessions × %d calls, %d round(s), %d CPUs, loopback\n", n, m, rounds, runtime.NumCPU())
	for i, tg := range targets {
		fmt.Printf("  %-12s %s\n", tg.name, totals[i].line())
	}
	if len(totals) == 2 {
		fmt.Printf("  throughput ratio agent-tools / bare: %.2f× overall, %.2f× median of %d rounds\n", ratio, medianRatio, rounds)
		fmt.Printf("  CPU per call (client + server, same process): agent-tools %s vs bare %s (%.2f×)\n",
			totals[1].cpuPerCall().Round(time.Microsecond), totals[0].cpuPerCall().Round(time.Microsecond),
			float64(totals[1].cpuPerCall())/float64(max(totals[0].cpuPerCall(), 1)))
	}
}
