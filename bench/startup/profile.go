package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/runtime"
)

// profileWarm profiles what a warm start costs the runtime itself, in
// process so that the profile has enough samples: one cold run of the real
// binary writes the tool-list cache and the pins, then rounds × (the
// runtime started as `serve` starts it, the first tools/list and the first
// help over an in-memory session, Close) run under the CPU profiler. The
// runtime is internal/runtime with the binary's options, so that it opens
// the pins file the cold run wrote (app.New alone keeps pins in memory, and
// every round would pin and scan 10,000 tools afresh, which a warm start
// does not). The upstream is started in the background, as by serve.
func profileWarm(n, rounds int, out string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "agent-tools-startup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := fmt.Sprintf("mode: progressive\nlocal:\n  enabled: false\naudit:\n  path: \"off\"\nproviders:\n  - id: big\n    kind: mcp\n    command: %q\n    args: [--upstream, %q]\n", self, strconv.Itoa(n))
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	cache := filepath.Join(dir, "cache")
	if _, err := once(self, dir, cache, n, 0); err != nil { // cold: writes the cache
		return err
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	defer pprof.StopCPUProfile()
	var total time.Duration
	for i := range rounds {
		d, err := warmOnce(dir)
		if err != nil {
			return err
		}
		total += d
		fmt.Printf("round %d: %v\n", i, d.Round(time.Millisecond))
	}
	fmt.Printf("%d tools: mean %v per warm start (app.New + first list + first help, in process)\n", n, (total / time.Duration(rounds)).Round(time.Millisecond))
	return nil
}

func warmOnce(dir string) (time.Duration, error) {
	ctx := context.Background()
	start := time.Now()
	rt, err := runtime.New(runtime.Options{ProjectDir: dir, LookupEnv: os.LookupEnv, FindConfig: true})
	if err != nil {
		return 0, err
	}
	if err := rt.Start(ctx); err != nil {
		return 0, err
	}
	defer rt.Close()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := rt.App().Facade.Server().Connect(ctx, st, nil)
	if err != nil {
		return 0, err
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "startup", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return 0, err
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "agent_tools_help", Arguments: map[string]any{}}); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
