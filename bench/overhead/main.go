// Command overhead measures what the agent-tools runtime adds to a call of an
// upstream MCP tool (docs/measured.md): the same echo upstream is called
// directly with a go-sdk client and through the runtime, interleaved call by
// call in one run, over stdio and over Streamable HTTP.
//
//	go run ./bench/overhead              # both transports, a table
//	go run ./bench/overhead --json --n 5000 --transport http
//
// The upstream is this binary re-run as a go-sdk echo server (--upstream
// stdio|http), a separate process in both cases. The runtime is built in
// process with app.New from a generated agent-tools.yaml (flat mode, echo
// read-only, audit to a file) and served by the production front ends:
// transport.Stdio over OS pipes, and transport.NewHTTP on a loopback port
// (with its per-caller rate limit off: this measures latency, not
// throttling). Its upstream connection is the mcp provider's: a child
// process over stdio, or Streamable HTTP to the upstream's port.
//
// The floor is a bare go-sdk proxy: a server that re-publishes the
// upstream's tools (names and schemas from its tools/list) and forwards each
// call through a go-sdk client session, with nothing else in the path. It is
// what any gateway built on this SDK costs at least; the three paths (direct,
// floor, runtime) are called in turn, call by call, the order rotating every
// round so that none always runs first.
//
// Over HTTP the runtime is called twice more per round, on the same /mcp:
// as a session client (protocol 2025-11-25: initialize, then
// Mcp-Session-Id) — the "runtime" column and the goals — and as a
// per-request client (2026-07-28: no session, each POST carries its version
// and capabilities) — the "per-request" line, with its ratio to the session
// path (--per-request=false leaves it out).
//
// With --progressive a second runtime in progressive mode is called too,
// through its provider's call meta-tool ({toolName, arguments}), and its
// p50 is given over the flat runtime's (goal at most 1.05).
//
// Goals: runtime/direct at most 2.0 over HTTP and 2.2 over stdio (p50), and
// runtime/floor at most 1.10 (p50; docs/measured.md).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/transport"
)

// withRules adds policy.rules to the runtime's config (--rules).
var withRules bool

// withCache adds a cache: entry for the echo tool (--cache): every call
// repeats its arguments, so the runtime's calls after the first are cache
// hits (docs/cache.md), to set against a run without.
var withCache bool

type stats struct {
	P50US  float64 `json:"p50_us"`
	P99US  float64 `json:"p99_us"`
	MeanUS float64 `json:"mean_us"`
}

type result struct {
	Transport string `json:"transport"`
	Calls     int    `json:"calls"`
	Direct    stats  `json:"direct"`
	Runtime   stats  `json:"runtime"`
	// Floor is a bare go-sdk proxy (re-publishes the upstream's tools and
	// forwards calls), in process like the runtime: the cost of the extra
	// hop alone.
	Floor      *stats  `json:"floor,omitempty"`
	RatioP50   float64 `json:"ratio_p50"`
	RatioP99   float64 `json:"ratio_p99"`
	FloorRatio float64 `json:"floor_ratio_p50,omitempty"`
	// OverFloorP50/P99 are runtime/floor: what agent-tools adds on top of
	// the SDK's own cost of a proxy hop.
	OverFloorP50 float64 `json:"runtime_over_floor_p50,omitempty"`
	OverFloorP99 float64 `json:"runtime_over_floor_p99,omitempty"`
	FloorGoal    float64 `json:"floor_goal,omitempty"`
	// PerRequest is the runtime called at protocol 2026-07-28 on the same
	// endpoint (HTTP only): no session, each call one self-contained POST.
	// PerRequestOverSession is its p50 and p99 over the session path's.
	PerRequest               *stats  `json:"per_request,omitempty"`
	PerRequestOverSessionP50 float64 `json:"per_request_over_session_p50,omitempty"`
	PerRequestOverSessionP99 float64 `json:"per_request_over_session_p99,omitempty"`
	// Progressive is the same upstream tool called through a second
	// runtime in progressive mode (its provider's call meta-tool:
	// {toolName, arguments}), interleaved with the others (--progressive);
	// ProgressiveOverFlat is its p50 and p99 over the flat runtime's.
	Progressive            *stats  `json:"progressive,omitempty"`
	ProgressiveOverFlatP50 float64 `json:"progressive_over_flat_p50,omitempty"`
	ProgressiveOverFlatP99 float64 `json:"progressive_over_flat_p99,omitempty"`
	Goal                   float64 `json:"goal"`
	Pass                   bool    `json:"pass"`
}

type report struct {
	Go      string   `json:"go"`
	CPUs    int      `json:"cpus"`
	Payload int      `json:"payload_bytes"`
	Results []result `json:"results"`
}

var goals = map[string]float64{"stdio": 2.2, "http": 2.0}

// floorGoal bounds runtime/floor at p50.
const floorGoal = 1.10

// progressiveGoal bounds progressive/flat at p50 (--progressive).
const progressiveGoal = 1.05

var only *bool

// perRequest adds the runtime's 2026-07-28 path over HTTP (--per-request).
var perRequest *bool

// progressive adds a second runtime in progressive mode (--progressive).
var progressive *bool

// The protocol versions of the runtime's two HTTP paths.
const (
	sessionVersion    = "2025-11-25"
	perRequestVersion = "2026-07-28"
)

func main() {
	upstream := flag.String("upstream", "", "run as the echo upstream over stdio or http (internal)")
	n := flag.Int("n", 2000, "measured calls per path and transport")
	warmup := flag.Int("warmup", 200, "unmeasured calls first")
	payload := flag.Int("payload", 64, "bytes of text echoed")
	which := flag.String("transport", "both", "stdio, http or both")
	withFloor := flag.Bool("floor", true, "also measure a bare go-sdk proxy in process (the cost of the extra hop alone)")
	asJSON := flag.Bool("json", false, "print JSON")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process (client and runtime) to `file`")
	only = flag.Bool("only-runtime", false, "call only through the runtime (no direct or floor path, no ratios): to profile the runtime's side with -cpuprofile/-memprofile")
	memProfile := flag.String("memprofile", "", "write an allocation profile of this process to `file` at the end")
	flag.BoolVar(&withCache, "cache", false, "serve the echo tool from the result cache (cache: [{tools: [ev_echo], ttl: 1h}]): the runtime's calls become cache hits, against a run without")
	flag.BoolVar(&withRules, "rules", false, "add per-identity policy rules (docs/http-security.md) that match every call: their per-call cost against a run without")
	perRequest = flag.Bool("per-request", true, "over HTTP, also call the runtime at protocol 2026-07-28 (no session) beside the session path (2025-11-25)")
	progressive = flag.Bool("progressive", false, "also call the tool through a second runtime in progressive mode (agent_tools_ev_call), beside the flat one")
	scripts := flag.Int("scripts", 3, "local scripts in the runtime's .agents/tools (the default config serves them; 0 = local provider off)")
	flag.Parse()

	if *upstream != "" {
		if err := serveUpstream(*upstream); err != nil {
			fmt.Fprintln(os.Stderr, "overhead upstream:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "overhead:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "overhead:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	rep := report{Go: runtime.Version(), CPUs: runtime.GOMAXPROCS(0), Payload: *payload}
	for _, tr := range []string{"stdio", "http"} {
		if *which != "both" && *which != tr {
			continue
		}
		r, err := measure(tr, *n, *warmup, *payload, *withFloor, *scripts)
		if err != nil {
			fmt.Fprintf(os.Stderr, "overhead: %s: %v\n", tr, err)
			os.Exit(1)
		}
		rep.Results = append(rep.Results, r)
	}
	if *memProfile != "" {
		if f, err := os.Create(*memProfile); err == nil {
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintln(os.Stderr, "overhead: memory profile:", err)
			}
			f.Close()
		}
	}
	if *only {
		pprof.StopCPUProfile()
		fmt.Println("only the runtime path was called: no ratios")
		return
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		printTable(os.Stdout, rep)
	}
	for _, r := range rep.Results {
		if !r.Pass {
			pprof.StopCPUProfile()
			os.Exit(1)
		}
	}
}

func printTable(w io.Writer, rep report) {
	fmt.Fprintf(w, "agent-tools overhead: echo of %d bytes, %s, GOMAXPROCS=%d\n\n", rep.Payload, rep.Go, rep.CPUs)
	fmt.Fprintf(w, "%-9s %7s %12s %12s %12s %12s %12s %12s %8s %8s %10s %10s %s\n", "transport", "calls", "direct p50", "direct p99",
		"floor p50", "floor p99", "runtime p50", "runtime p99", "rt/dir", "fl/dir", "rt/fl p50", "rt/fl p99", "verdict")
	for _, r := range rep.Results {
		verdict := "ok"
		if !r.Pass {
			verdict = "OVER"
		}
		fl := stats{}
		if r.Floor != nil {
			fl = *r.Floor
		}
		fmt.Fprintf(w, "%-9s %7d %10.0fµs %10.0fµs %10.0fµs %10.0fµs %10.0fµs %10.0fµs %7.2f× %7.2f× %9.2f× %9.2f× %s (≤%.1f× direct, ≤%.2f× floor)\n", r.Transport, r.Calls,
			r.Direct.P50US, r.Direct.P99US, fl.P50US, fl.P99US, r.Runtime.P50US, r.Runtime.P99US, r.RatioP50, r.FloorRatio,
			r.OverFloorP50, r.OverFloorP99, verdict, r.Goal, floorGoal)
	}
	for _, r := range rep.Results {
		if pg := r.Progressive; pg != nil {
			fmt.Fprintf(w, "\n%s, progressive call (agent_tools_ev_call) p50 %.0fµs p99 %.0fµs: progressive/flat %.2f× p50, %.2f× p99 (goal ≤ %.2f× p50)\n",
				r.Transport, pg.P50US, pg.P99US, r.ProgressiveOverFlatP50, r.ProgressiveOverFlatP99, progressiveGoal)
		}
		if pr := r.PerRequest; pr != nil {
			fmt.Fprintf(w, "\n%s, same /mcp: session (%s) p50 %.0fµs p99 %.0fµs; per-request (%s) p50 %.0fµs p99 %.0fµs: per-request/session %.2f× p50, %.2f× p99\n",
				r.Transport, sessionVersion, r.Runtime.P50US, r.Runtime.P99US, perRequestVersion, pr.P50US, pr.P99US, r.PerRequestOverSessionP50, r.PerRequestOverSessionP99)
		}
	}
}

// measure calls the upstream directly and through the runtime, alternating.
func measure(tr string, n, warmup, payload int, withFloor bool, scripts int) (result, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	tmp, err := os.MkdirTemp("", "agent-tools-overhead-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(tmp)
	// The mcp provider caches tool lists under the user cache directory: keep
	// the benchmark's out of the real one.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))

	client := func() *sdk.Client {
		return sdk.NewClient(&sdk.Implementation{Name: "overhead", Version: "1"}, nil)
	}
	var direct, viaRuntime, viaFloor, floorUp, viaPerRequest *sdk.ClientSession
	var providerYAML string
	switch tr {
	case "stdio":
		cmd := exec.Command(self, "--upstream", "stdio")
		cmd.Env = upstreamEnv() // as the runtime's child gets
		direct, err = client().Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return result{}, fmt.Errorf("direct: %w", err)
		}
		if withFloor {
			cmd2 := exec.Command(self, "--upstream", "stdio")
			cmd2.Env = upstreamEnv()
			floorUp, err = client().Connect(ctx, &sdk.CommandTransport{Command: cmd2}, nil)
		}
		providerYAML = fmt.Sprintf("    command: %q\n    args: [--upstream, stdio]\n", self)
	case "http":
		url, stop, err := startHTTPUpstream(self)
		if err != nil {
			return result{}, err
		}
		defer stop()
		direct, err = client().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: ownClient()}, nil)
		if err != nil {
			return result{}, fmt.Errorf("direct: %w", err)
		}
		if withFloor {
			// err here is this block's own (declared with url above): checked
			// here, or the floor's failure would go unseen.
			floorUp, err = client().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: ownClient()}, nil)
			if err != nil {
				return result{}, fmt.Errorf("floor upstream: %w", err)
			}
		}
		providerYAML = fmt.Sprintf("    url: %q\n", url)
	}
	if err != nil {
		return result{}, fmt.Errorf("floor upstream: %w", err)
	}
	defer direct.Close()
	var floor *sdk.Server
	if withFloor {
		defer floorUp.Close()
		if floor, err = bareProxy(ctx, floorUp); err != nil {
			return result{}, fmt.Errorf("bare proxy: %w", err)
		}
	}

	local := "local:\n  enabled: false\n"
	if scripts > 0 {
		local = ""
		if err := writeScripts(filepath.Join(tmp, ".agents", "tools"), scripts); err != nil {
			return result{}, err
		}
	}
	if withRules { // rules that match every caller (one denies nothing the bench calls) and two that match none
		local += "policy:\n  rules:\n    - identities: [\"process:*\", \"token:*\"]\n      deny: [\"*_delete_*\"]\n" +
			"    - identities: [\"oidc:*\"]\n      deny: [\"*\"]\n    - profiles: [default]\n      deny: [\"nothing_*\"]\n"
	}
	newRuntime := func(mode, cfgName string) (*app.App, *metrics.Metrics, error) {
		cfg := "mode: " + mode + "\n" + local + "audit:\n  path: audit-" + mode + ".jsonl\nproviders:\n  - id: ev\n    kind: mcp\n    readonly: [echo]\n" + providerYAML
		if withCache {
			cfg += "cache:\n  - tools: [\"ev_echo\", \"echo\"]\n    ttl: 1h\n"
		}
		cfgPath := filepath.Join(tmp, cfgName)
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			return nil, nil, err
		}
		// Metrics on, as serve runs it.
		m := metrics.New()
		a, err := app.New(ctx, app.Options{ConfigPath: cfgPath, ProjectDir: tmp, Logger: slog.New(slog.DiscardHandler), AuditDefault: io.Discard,
			Middleware: []pipeline.Middleware{m.Middleware()}})
		if err != nil {
			return nil, nil, fmt.Errorf("runtime (%s): %w", mode, err)
		}
		return a, m, nil
	}
	a, m, err := newRuntime("flat", "agent-tools.yaml")
	if err != nil {
		return result{}, err
	}
	defer a.Close()
	var ap *app.App // the progressive runtime (--progressive)
	var mp *metrics.Metrics
	if *progressive && !*only {
		if ap, mp, err = newRuntime("progressive", "agent-tools-progressive.yaml"); err != nil {
			return result{}, err
		}
		defer ap.Close()
	}
	var viaProgressive *sdk.ClientSession

	switch tr {
	case "stdio":
		c2sR, c2sW, _ := os.Pipe()
		s2cR, s2cW, _ := os.Pipe()
		go func() { _ = a.Facade.Server().Run(ctx, transport.Stdio(c2sR, s2cW, time.Second)) }() // ends with ctx
		viaRuntime, err = client().Connect(ctx, &sdk.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
		if err != nil {
			break
		}
		if ap != nil {
			pc2sR, pc2sW, _ := os.Pipe()
			ps2cR, ps2cW, _ := os.Pipe()
			go func() { _ = ap.Facade.Server().Run(ctx, transport.Stdio(pc2sR, ps2cW, time.Second)) }() // ends with ctx
			if viaProgressive, err = client().Connect(ctx, &sdk.IOTransport{Reader: ps2cR, Writer: pc2sW}, nil); err != nil {
				break
			}
		}
		if !withFloor {
			break
		}
		fc2sR, fc2sW, _ := os.Pipe()
		fs2cR, fs2cW, _ := os.Pipe()
		go func() { _ = floor.Run(ctx, &sdk.IOTransport{Reader: fc2sR, Writer: fs2cW}) }() // ends with ctx
		viaFloor, err = client().Connect(ctx, &sdk.IOTransport{Reader: fs2cR, Writer: fc2sW}, nil)
	case "http":
		h, herr := transport.NewHTTP(transport.HTTPOptions{Server: a.Facade.Server(), Addr: "127.0.0.1:0", RatePerSecond: -1, Metrics: m})
		if herr != nil {
			return result{}, herr
		}
		ln, lerr := net.Listen("tcp", "127.0.0.1:0")
		if lerr != nil {
			return result{}, lerr
		}
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(ln) }() // ErrServerClosed at Close
		defer srv.Close()
		endpoint := "http://" + ln.Addr().String() + transport.MCPPath
		viaRuntime, err = client().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint}, &sdk.ClientSessionOptions{ProtocolVersion: sessionVersion})
		if err != nil {
			break
		}
		if *perRequest && !*only {
			if viaPerRequest, err = client().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint}, &sdk.ClientSessionOptions{ProtocolVersion: perRequestVersion}); err != nil {
				break
			}
			if viaPerRequest.ID() != "" || viaRuntime.ID() == "" {
				return result{}, fmt.Errorf("session ids: per-request %q, session %q: the two paths are not what they claim", viaPerRequest.ID(), viaRuntime.ID())
			}
		}
		if ap != nil {
			ph, perr := transport.NewHTTP(transport.HTTPOptions{Server: ap.Facade.Server(), Addr: "127.0.0.1:0", RatePerSecond: -1, Metrics: mp})
			if perr != nil {
				return result{}, perr
			}
			pln, lerr := net.Listen("tcp", "127.0.0.1:0")
			if lerr != nil {
				return result{}, lerr
			}
			psrv := &http.Server{Handler: ph}
			go func() { _ = psrv.Serve(pln) }() // ErrServerClosed at Close
			defer psrv.Close()
			if viaProgressive, err = client().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + pln.Addr().String() + transport.MCPPath},
				&sdk.ClientSessionOptions{ProtocolVersion: sessionVersion}); err != nil {
				break
			}
		}
		if !withFloor {
			break
		}
		fln, ferr := net.Listen("tcp", "127.0.0.1:0")
		if ferr != nil {
			return result{}, ferr
		}
		fsrv := &http.Server{Handler: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return floor }, nil)}
		go func() { _ = fsrv.Serve(fln) }() // ErrServerClosed at Close
		defer fsrv.Close()
		viaFloor, err = client().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + fln.Addr().String()}, nil)
	}
	if err != nil {
		return result{}, fmt.Errorf("runtime session: %w", err)
	}
	defer viaRuntime.Close()
	sessions := []*sdk.ClientSession{direct, viaRuntime}
	if withFloor {
		defer viaFloor.Close()
		sessions = append(sessions, viaFloor, floorUp)
	}
	if viaPerRequest != nil {
		defer viaPerRequest.Close()
		sessions = append(sessions, viaPerRequest)
	}
	if viaProgressive != nil {
		defer viaProgressive.Close()
		sessions = append(sessions, viaProgressive)
	}

	// Like any client, both list the tools first (the SDK then uses their
	// definitions on every call).
	for _, cs := range sessions {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return result{}, fmt.Errorf("listing tools: %w", err)
		}
	}
	text := strings.Repeat("x", payload)
	args := map[string]any{"text": text}
	progressiveArgs := map[string]any{"toolName": "echo", "arguments": args}
	callOnce := func(cs *sdk.ClientSession, name string) (time.Duration, error) {
		a := any(args)
		if cs == viaProgressive {
			a = progressiveArgs
		}
		start := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: a})
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if res.IsError || len(res.Content) == 0 {
			b, _ := json.Marshal(res)
			return 0, fmt.Errorf("%s failed: %s", name, b)
		}
		if tc, ok := res.Content[0].(*sdk.TextContent); !ok || tc.Text != text {
			b, _ := json.Marshal(res)
			return 0, fmt.Errorf("%s answered %.200s", name, b)
		}
		return d, nil
	}
	var dd, rd, fd, pd, gd []time.Duration
	paths := []struct {
		what string
		cs   *sdk.ClientSession
		tool string
		out  *[]time.Duration
	}{{"direct", direct, "echo", &dd}, {"through the runtime", viaRuntime, "ev_echo", &rd}}
	if withFloor {
		paths = append(paths, struct {
			what string
			cs   *sdk.ClientSession
			tool string
			out  *[]time.Duration
		}{"through the bare proxy", viaFloor, "echo", &fd})
	}
	if viaPerRequest != nil {
		paths = append(paths, struct {
			what string
			cs   *sdk.ClientSession
			tool string
			out  *[]time.Duration
		}{"through the runtime, per request", viaPerRequest, "ev_echo", &pd})
	}
	if viaProgressive != nil {
		paths = append(paths, struct {
			what string
			cs   *sdk.ClientSession
			tool string
			out  *[]time.Duration
		}{"through the progressive runtime", viaProgressive, "agent_tools_ev_call", &gd})
	}
	if *only {
		paths = paths[1:2]
	}
	for i := 0; i < warmup+n; i++ {
		for k := range paths {
			p := paths[(i+k)%len(paths)] // rotate: no path always runs first
			d, err := callOnce(p.cs, p.tool)
			if err != nil {
				return result{}, fmt.Errorf("%s: %w", p.what, err)
			}
			if i >= warmup {
				*p.out = append(*p.out, d)
			}
		}
	}
	if *only {
		return result{Transport: tr, Calls: n, Runtime: summarize(rd)}, nil
	}
	r := result{Transport: tr, Calls: n, Direct: summarize(dd), Runtime: summarize(rd), Goal: goals[tr]}
	r.RatioP50 = round2(r.Runtime.P50US / r.Direct.P50US)
	r.RatioP99 = round2(r.Runtime.P99US / r.Direct.P99US)
	if withFloor {
		f := summarize(fd)
		r.Floor = &f
		r.FloorRatio = round2(r.Floor.P50US / r.Direct.P50US)
		r.OverFloorP50 = round2(r.Runtime.P50US / r.Floor.P50US)
		r.OverFloorP99 = round2(r.Runtime.P99US / r.Floor.P99US)
		r.FloorGoal = floorGoal
	}
	if viaPerRequest != nil {
		p := summarize(pd)
		r.PerRequest = &p
		r.PerRequestOverSessionP50 = round2(p.P50US / r.Runtime.P50US)
		r.PerRequestOverSessionP99 = round2(p.P99US / r.Runtime.P99US)
	}
	if viaProgressive != nil {
		g := summarize(gd)
		r.Progressive = &g
		r.ProgressiveOverFlatP50 = round2(g.P50US / r.Runtime.P50US)
		r.ProgressiveOverFlatP99 = round2(g.P99US / r.Runtime.P99US)
	}
	r.Pass = r.RatioP50 <= r.Goal && (r.Floor == nil || r.OverFloorP50 <= floorGoal)
	return r, nil
}

func summarize(ds []time.Duration) stats {
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	q := func(p float64) float64 { return us(s[min(len(s)-1, int(p*float64(len(s))))]) }
	return stats{P50US: q(0.50), P99US: q(0.99), MeanUS: round1(us(sum) / float64(len(s)))}
}

func us(d time.Duration) float64 { return round1(float64(d) / float64(time.Microsecond)) }
func round1(f float64) float64   { return float64(int64(f*10+0.5)) / 10 }
func round2(f float64) float64   { return float64(int64(f*100+0.5)) / 100 }

// startHTTPUpstream runs the upstream over HTTP in a child process and
// returns its /mcp URL.
func startHTTPUpstream(self string) (string, func(), error) {
	cmd := exec.Command(self, "--upstream", "http")
	cmd.Env = upstreamEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		stdin.Close() // the upstream exits at EOF
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }() // the upstream's exit status is not measured
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Kill() // it did not exit at EOF; an error means it just did
		}
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("upstream did not report its address: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// bareProxy is the floor: a go-sdk server that re-publishes up's tools
// (names, descriptions and schemas as listed) and forwards every call to up,
// with nothing else (no validation, policy, audit or result shaping).
func bareProxy(ctx context.Context, up *sdk.ClientSession) (*sdk.Server, error) {
	s := sdk.NewServer(&sdk.Implementation{Name: "bare-proxy", Version: "1"}, nil)
	forward := func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return up.CallTool(ctx, &sdk.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
	}
	for t, err := range up.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		s.AddTool(&sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}, forward)
	}
	return s, nil
}

// writeScripts puts n executable scripts in dir, as a project has them:
// the local provider then serves them beside the upstream.
func writeScripts(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		src := fmt.Sprintf("#!/bin/sh\n# @description Script %d of the benchmark project.\n# @readonly\necho %d\n", i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("script%d", i)), []byte(src), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// upstreamEnv is the minimal environment the mcp provider gives its child,
// so that both paths run the same upstream.
func upstreamEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "TMPDIR", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func echoServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil, nil
		})
	return s
}

// serveUpstream is the echo upstream. Over HTTP it prints its URL and runs
// until its stdin closes.
func serveUpstream(mode string) error {
	switch mode {
	case "stdio":
		return echoServer().Run(context.Background(), &sdk.StdioTransport{})
	case "http":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		s := echoServer()
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
		go func() { _ = http.Serve(ln, h) }() // serves until the process exits
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		_, _ = io.Copy(io.Discard, os.Stdin) // serve until the parent closes stdin
		return nil
	}
	return fmt.Errorf("unknown upstream mode %q", mode)
}

// ownClient is an HTTP client with a connection pool of its own. The direct
// and floor paths shared http.DefaultClient's pool before, and a call then
// often went out on the connection the other path had just used, while the
// runtime's upstream session has its own pool (as each path would in a
// process of its own): in one run, the floor's upstream call was ~50 µs
// faster at p50 with the shared pool than with its own.
func ownClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}
