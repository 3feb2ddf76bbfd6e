// Command startup measures how fast `agent-tools serve` answers its first
// tools/list and agent_tools_help with a large upstream catalog, with a
// cold and a warm tool-list cache, and how much memory it holds at rest
// (docs/measured.md).
//
//	go run ./bench/startup                     # 1k, 10k and 100k tools
//	go run ./bench/startup --tools 10000 --json
//
// The upstream is this binary re-run as a go-sdk server with N generated
// tools (--upstream N, stdio). The runtime is this binary re-run as
// `agent-tools serve` (--serve: internal/cli.Run, exactly the command) in a
// project whose agent-tools.yaml names that upstream, progressive mode. The
// clock starts before the runtime process is started and stops when the
// answer arrives; "all tools" is when agent_tools_help first reports the
// upstream with all N tools (cold: the upstream had to be started and
// listed). Resident memory (VmRSS from /proc) is read after a short rest.
//
// "Upstream alone" is that upstream started and listed by a bare go-sdk
// client: it includes the client's own decoding of the list (every schema
// into maps, encoded and decoded again by its x-mcp-header check), which the
// runtime skips (it takes the list off the wire), so a cold runtime can
// answer before it. The upstream's schemas are raw JSON (see serveUpstream).
//
// Cold: an empty cache directory. Warm: the cache the cold run left.
// Goals: first tools/list and help ≤ 300 ms warm, ≤ 1 s cold, ≤ 80 MB
// resident at rest, at 10,000 tools.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/cli"
)

type row struct {
	Tools      int     `json:"tools"`
	Cache      string  `json:"cache"`
	ListMS     float64 `json:"first_list_ms"`
	HelpMS     float64 `json:"first_help_ms"`
	AllToolsMS float64 `json:"all_tools_ms"`
	RSSMB      float64 `json:"rss_mb_at_rest"`
	// AnonMB is the anonymous part of RSSMB (heap, stacks: RssAnon). The
	// rest is the binary's pages the process touched, which moves by a
	// few MB with the binary's layout alone (the same code built from
	// another directory), not with what the code keeps.
	AnonMB float64 `json:"rss_anon_mb_at_rest"`
	// CPUMS is the runtime process's CPU time (user+system) when its first
	// help answer arrived: on a loaded machine, the wall time above is
	// mostly waiting for a core; this is not.
	CPUMS float64 `json:"cpu_ms_to_first_help"`
	// UpstreamMS is the upstream alone: start, initialize and list all its
	// tools with a go-sdk client (what a cold start waits for at least).
	UpstreamMS float64 `json:"upstream_alone_ms"`
	Goal       float64 `json:"goal_ms"`
	Pass       bool    `json:"pass"`
}

func main() {
	upstream := flag.Int("upstream", 0, "run as an upstream MCP server with this many tools (internal)")
	serve := flag.Bool("serve", false, "run as agent-tools serve (internal)")
	sizes := flag.String("tools", "1000,10000,100000", "comma-separated catalog sizes")
	rest := flag.Duration("rest", time.Second, "how long the runtime rests before its memory is read")
	asJSON := flag.Bool("json", false, "print JSON")
	profile := flag.String("cpuprofile", "", "instead of the table: CPU-profile `file` over --rounds in-process warm starts (app.New, first tools/list, first help) of the first --tools size")
	rounds := flag.Int("rounds", 10, "warm starts profiled with --cpuprofile")
	flag.Parse()

	switch {
	case *upstream > 0:
		if err := serveUpstream(*upstream); err != nil {
			fmt.Fprintln(os.Stderr, "startup upstream:", err)
			os.Exit(1)
		}
		return
	case *serve:
		if f := os.Getenv("STARTUP_CPUPROFILE"); f != "" {
			// The serve process's first second (STARTUP_CPUPROFILE_FOR: a
			// longer time, e.g. 3s to cover a cold start's listing on a busy
			// machine), for profiling the start-up path as it really runs
			// (merge several with go tool pprof).
			d := time.Second
			if v, err := time.ParseDuration(os.Getenv("STARTUP_CPUPROFILE_FOR")); err == nil && v > 0 {
				d = v
			}
			if out, err := os.Create(f + "." + strconv.Itoa(os.Getpid())); err == nil && pprof.StartCPUProfile(out) == nil {
				time.AfterFunc(d, func() { pprof.StopCPUProfile(); out.Close() })
			}
		}
		if f := os.Getenv("STARTUP_HEAPPROFILE"); f != "" {
			// What the serve process holds at rest (after start-up garbage
			// was returned, 2 s in), for the memory column.
			time.AfterFunc(4*time.Second, func() {
				if out, err := os.Create(f + "." + strconv.Itoa(os.Getpid())); err == nil {
					runtime.GC()
					if err := pprof.WriteHeapProfile(out); err != nil {
						fmt.Fprintln(os.Stderr, "startup: heap profile:", err)
					}
					out.Close()
				}
			})
		}
		wd, _ := os.Getwd()
		os.Exit(cli.Run(context.Background(), &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv, Dir: wd},
			append([]string{"serve", "--log-level", "warn"}, flag.Args()...)))
	}

	if *profile != "" {
		n, _ := strconv.Atoi(strings.Split(*sizes, ",")[0])
		if err := profileWarm(n, *rounds, *profile); err != nil {
			fmt.Fprintln(os.Stderr, "startup:", err)
			os.Exit(1)
		}
		return
	}
	var rows []row
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1_000_000 {
			fmt.Fprintf(os.Stderr, "startup: bad size %q\n", f)
			os.Exit(2)
		}
		rs, err := measure(n, *rest)
		if err != nil {
			fmt.Fprintf(os.Stderr, "startup: %d tools: %v\n", n, err)
			os.Exit(1)
		}
		rows = append(rows, rs...)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{"go": runtime.Version(), "cpus": runtime.NumCPU(), "rows": rows})
		return
	}
	fmt.Printf("agent-tools start-up: one upstream over stdio, progressive mode, %s, %d CPUs\n\n", runtime.Version(), runtime.NumCPU())
	fmt.Printf("%8s %5s %12s %12s %12s %12s %10s %10s %14s %s\n", "tools", "cache", "first list", "first help", "CPU to help", "all tools", "RSS rest", "anon", "upstream alone", "goal (list and help)")
	for _, r := range rows {
		v := "ok"
		if !r.Pass {
			v = "OVER"
		}
		fmt.Printf("%8d %5s %10.0fms %10.0fms %10.0fms %10.0fms %8.1fMB %8.1fMB %12.0fms ≤%.0fms %s\n", r.Tools, r.Cache, r.ListMS, r.HelpMS, r.CPUMS, r.AllToolsMS, r.RSSMB, r.AnonMB, r.UpstreamMS, r.Goal, v)
	}
}

// measure runs the runtime twice on one catalog: cold, then warm.
func measure(n int, rest time.Duration) ([]row, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agent-tools-startup-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := fmt.Sprintf("mode: progressive\nlocal:\n  enabled: false\naudit:\n  path: \"off\"\nproviders:\n  - id: big\n    kind: mcp\n    command: %q\n    args: [--upstream, %q]\n", self, strconv.Itoa(n))
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	cache := filepath.Join(dir, "cache")
	up, err := upstreamAlone(self, n)
	if err != nil {
		return nil, fmt.Errorf("upstream alone: %w", err)
	}
	var rows []row
	for _, which := range []string{"cold", "warm"} {
		r, err := once(self, dir, cache, n, rest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", which, err)
		}
		r.Cache, r.UpstreamMS = which, up
		r.Goal = 300
		if which == "cold" {
			r.Goal = 1000
		}
		r.Pass = r.ListMS <= r.Goal && r.HelpMS <= r.Goal
		rows = append(rows, r)
	}
	return rows, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// once starts the runtime, times its first answers, waits until help shows
// all n tools (so the cache is written for the warm run), rests and reads
// its memory.
func once(self, dir, cache string, n int, rest time.Duration) (row, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(self, "--serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	cmd.Stderr = os.Stderr
	start := time.Now()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "startup", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return row{}, err
	}
	defer cs.Close()
	r := row{Tools: n}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return row{}, fmt.Errorf("tools/list: %w", err)
	}
	r.ListMS = ms(time.Since(start))
	want := fmt.Sprintf(`"tools":%d`, n) // help's providers[].tools
	for i := 0; ; i++ {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "agent_tools_help", Arguments: map[string]any{}})
		if err != nil {
			return row{}, fmt.Errorf("help: %w", err)
		}
		if i == 0 {
			r.HelpMS = ms(time.Since(start))
			r.CPUMS = cpuMS(cmd.Process.Pid)
		}
		if text(res, want) {
			r.AllToolsMS = ms(time.Since(start))
			break
		}
		if ctx.Err() != nil || i > 2000 {
			return row{}, fmt.Errorf("help never showed %q", want)
		}
		time.Sleep(10 * time.Millisecond) // polling a child process: it has no other signal
	}
	time.Sleep(rest)
	r.RSSMB, r.AnonMB = rssMB(cmd.Process.Pid, "VmRSS:"), rssMB(cmd.Process.Pid, "RssAnon:")
	return r, nil
}

func text(res *sdk.CallToolResult, want string) bool {
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok && strings.Contains(strings.ReplaceAll(t.Text, " ", ""), want) {
			return true
		}
	}
	return false
}

// upstreamAlone times starting the upstream and listing all its tools.
func upstreamAlone(self string, n int) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "startup", Version: "1"}, nil).Connect(ctx,
		&sdk.CommandTransport{Command: exec.Command(self, "--upstream", strconv.Itoa(n))}, nil)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	got := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return 0, err
		}
		got++
	}
	if got != n {
		return 0, fmt.Errorf("listed %d tools, want %d", got, n)
	}
	return ms(time.Since(start)), nil
}

// cpuMS is the user+system CPU time of pid so far (Linux; 0 elsewhere).
func cpuMS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:] // the command name may hold spaces
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64) // utime, field 14 of the whole line
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 10 // clock ticks of 10 ms (USER_HZ = 100 on Linux)
}

// rssMB is a resident-set figure of pid in MB, its field of
// /proc/pid/status (Linux; 0 elsewhere).
func rssMB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

var words = strings.Fields("read write list create delete update search find issue pull request branch commit file folder user team project board card invoice payment order customer ticket event calendar message channel")

// serveUpstream serves n generated tools over stdio until stdin closes.
//
// The schemas are given to the go-sdk as raw JSON (json.RawMessage), as a
// server that loads its schemas from files would publish them, and the
// fixture runs with GOGC 400. Given as map[string]any, each schema is
// encoded and decoded twice by Server.AddTool (its object check and its
// x-mcp-header check), which with the garbage it makes was most of this
// fixture's start at 10,000 tools (~1.05 s of ~1.1 s "upstream alone" on
// 2 cores, against ~0.6 s now). The bytes on the wire are the same as
// json.Marshal of the former maps (keys sorted), so the runtime is given
// the same list; "upstream alone" measures this same fixture, so what the
// runtime adds to it stays visible.
func serveUpstream(n int) error {
	debug.SetGCPercent(400)
	s := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, nil)
	h := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	for i := range n {
		a, b, c := words[i%len(words)], words[(i/len(words))%len(words)], words[(i/7)%len(words)]
		s.AddTool(&sdk.Tool{
			Name:        fmt.Sprintf("%s_%s_%d", a, b, i),
			Description: fmt.Sprintf("%s the %s of a %s (generated tool %d).", strings.ToUpper(a[:1])+a[1:], b, c, i),
			InputSchema: fixtureSchema(b),
		}, h)
	}
	return s.Run(context.Background(), &sdk.StdioTransport{})
}

// fixtureSchema is a generated tool's input schema, as json.Marshal writes
// the object {"type": "object", "properties": {"id": {"type": "string",
// "description": "the <word> id"}, "limit": {"type": "integer",
// "description": "at most this many"}}, "required": ["id"]}.
func fixtureSchema(word string) json.RawMessage {
	desc, _ := json.Marshal("the " + word + " id")
	return json.RawMessage(`{"properties":{"id":{"description":` + string(desc) +
		`,"type":"string"},"limit":{"description":"at most this many","type":"integer"}},"required":["id"],"type":"object"}`)
}
