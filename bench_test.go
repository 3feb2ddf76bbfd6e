package agenttools_test

import (
	"context"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http/httptest"
	"testing"
	"time"

	agenttools "github.com/agent-tools/agent-tools"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// add is the service function every path ends in.
func add(in addIn) addOut { return addOut{Sum: in.A + in.B} }

// BenchmarkCallOverhead measures one call of the same service function
// three ways, interleaved in one loop so that the three see the same
// machine state: a direct Go call, Runtime.Call in-process (the whole
// pipeline: validation, policy, audit encoding off, loop guard), and
// tools/call over Streamable HTTP on loopback with the official go-sdk
// client. It reports each path's ns/op and the ratios side by side.
//
//	go test -run '^$' -bench CallOverhead -benchtime 2000x .
func BenchmarkCallOverhead(b *testing.B) {
	ctx := context.Background()
	rt, err := agenttools.New(agenttools.Options{Mode: "flat"})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	must(b, agenttools.AddTool(rt, &agenttools.Tool{Namespace: "math", Action: "add", Description: "Add two integers.", ReadOnly: true},
		func(_ context.Context, _ *agenttools.CallInfo, in addIn) (addOut, error) { return add(in), nil }))
	if err := rt.Start(ctx); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(rt.Handler())
	defer srv.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"a": 2, "b": 3}
	// Different sessions for the two runtime paths, and arguments that
	// never fail: the loop guard keeps no state for successful calls.
	sess := rt.NewSession(agenttools.SessionOptions{})
	defer sess.Close()

	var direct, inproc, overHTTP time.Duration
	var sink int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		sink += add(addIn{A: 2, B: 3}).Sum
		t1 := time.Now()
		if _, err := sess.Call(ctx, "math_add", args); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "math_add", Arguments: args}); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		t3 := time.Now()
		direct, inproc, overHTTP = direct+t1.Sub(t0), inproc+t2.Sub(t1), overHTTP+t3.Sub(t2)
	}
	b.StopTimer()
	if sink == 0 {
		b.Fatal("unreachable")
	}
	n := float64(b.N)
	b.ReportMetric(0, "ns/op") // the three paths below replace the loop's total
	b.ReportMetric(float64(direct.Nanoseconds())/n, "direct-ns/op")
	b.ReportMetric(float64(inproc.Nanoseconds())/n, "inprocess-ns/op")
	b.ReportMetric(float64(overHTTP.Nanoseconds())/n, "http-ns/op")
	b.ReportMetric(float64(inproc)/float64(max(direct, 1)), "inprocess/direct")
	b.ReportMetric(float64(overHTTP)/float64(max(inproc, 1)), "http/inprocess")
}
