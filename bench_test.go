package agenttools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	goruntime "runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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

// catalogProvider is an outside Provider with n tools, each with a schema
// like a real service's (five described properties), listed as the same
// values on every Tools call, counting them; it is no ChangeNotifier
// (notifyingCatalog is).
type catalogProvider struct {
	tools []*agenttools.Tool
	lists atomic.Int64
}

type itemIn struct {
	ID        string   `json:"id" jsonschema:"the item's identifier, as the catalog lists it"`
	Quantity  int      `json:"quantity,omitempty" jsonschema:"how many; 1 when absent"`
	Warehouse string   `json:"warehouse,omitempty" jsonschema:"the warehouse code, e.g. PAR-2"`
	Tags      []string `json:"tags,omitempty" jsonschema:"labels to filter by"`
	DryRun    bool     `json:"dry_run,omitempty" jsonschema:"describe what would happen without doing it"`
}

func newCatalogProvider(n int) *catalogProvider {
	p := &catalogProvider{}
	for i := range n {
		in, err := jsonschema.For[itemIn](nil)
		if err != nil {
			panic(err)
		}
		p.tools = append(p.tools, &agenttools.Tool{Action: fmt.Sprintf("op_%02d", i),
			Description: fmt.Sprintf("Operation %d on the catalog's items.", i), InputSchema: in, ReadOnly: true})
	}
	return p
}

func (p *catalogProvider) Info() agenttools.ProviderInfo {
	return agenttools.ProviderInfo{ID: "catalog", Description: "The service's catalog."}
}

func (p *catalogProvider) Tools(context.Context) ([]*agenttools.Tool, error) {
	p.lists.Add(1)
	return p.tools, nil
}

func (p *catalogProvider) Call(_ context.Context, _ *agenttools.CallInfo, args json.RawMessage) (*agenttools.Result, error) {
	return &agenttools.Result{Text: "done"}, nil
}

// notifyingCatalog is the same provider with ChangeNotifier.
type notifyingCatalog struct{ *catalogProvider }

func (p notifyingCatalog) Info() agenttools.ProviderInfo {
	return agenttools.ProviderInfo{ID: "notifying", Description: "The service's catalog, which reports its changes."}
}

func (notifyingCatalog) NotifyChanges(func()) {}

// BenchmarkProviderCall measures one in-process call (Session.Call, the
// whole pipeline) of a registered tool, in a runtime that serves only it,
// and of a tool of an outside Provider with 50 tools, without and with
// ChangeNotifier (both in a second runtime), interleaved in one loop so
// that the three see the same machine state. A fourth path ("relisted")
// is the provider without ChangeNotifier in a runtime with a negative
// RelistInterval, listed on every call: what a re-listing costs. It reports each path's
// ns/op, the ratios to the registered tool's (goal: at most 1.2), each
// path's allocations and bytes per call (measured after the timed loop),
// and how many times the runtime listed each provider during the loop.
//
//	go test -run '^$' -bench ProviderCall -benchtime 2000x .
func BenchmarkProviderCall(b *testing.B) {
	ctx := context.Background()
	newRuntime := func(o agenttools.Options) *agenttools.Runtime {
		rt, err := agenttools.New(o)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { rt.Close() })
		return rt
	}
	reg, prov := newRuntime(agenttools.Options{Mode: "flat"}), newRuntime(agenttools.Options{Mode: "flat"})
	every := newRuntime(agenttools.Options{Mode: "flat", RelistInterval: -1})
	// The registered tool is the providers' op_07: same schema, arguments
	// and answer, so that only the way it is served differs.
	in, err := jsonschema.For[itemIn](nil)
	must(b, err)
	must(b, reg.AddTool(&agenttools.Tool{Namespace: "items", Action: "op_07", Description: "Operation 7 on the catalog's items.",
		InputSchema: in, ReadOnly: true}, func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "done", nil }))
	plain, notifying := newCatalogProvider(50), notifyingCatalog{newCatalogProvider(50)}
	must(b, prov.AddProvider(plain))
	must(b, prov.AddProvider(notifying))
	relisted := newCatalogProvider(50)
	must(b, every.AddProvider(relisted))
	must(b, reg.Start(ctx))
	must(b, prov.Start(ctx))
	must(b, every.Start(ctx))
	sess, psess, esess := reg.NewSession(agenttools.SessionOptions{}), prov.NewSession(agenttools.SessionOptions{}), every.NewSession(agenttools.SessionOptions{})
	defer sess.Close()
	defer psess.Close()
	defer esess.Close()
	itemArgs := map[string]any{"id": "sku-1", "quantity": 2}
	calls := []func(){
		func() { mustCall(b, sess, "items_op_07", itemArgs) },
		func() { mustCall(b, psess, "catalog_op_07", itemArgs) },
		func() { mustCall(b, psess, "notifying_op_07", itemArgs) },
		func() { mustCall(b, esess, "catalog_op_07", itemArgs) },
	}
	for _, c := range calls { // warm up: the first call of each lists it
		c()
	}
	lists0, nlists0 := plain.lists.Load(), notifying.lists.Load()
	var spent [4]time.Duration
	var each [4][]time.Duration
	for j := range each {
		each[j] = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range calls {
			j := (i + k) % len(calls) // rotate so that none always runs first
			t0 := time.Now()
			calls[j]()
			d := time.Since(t0)
			spent[j] += d
			each[j] = append(each[j], d)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(0, "ns/op") // the paths below replace the loop's total
	b.ReportMetric(float64(spent[0].Nanoseconds())/n, "registered-ns/op")
	b.ReportMetric(float64(spent[1].Nanoseconds())/n, "provider-ns/op")
	b.ReportMetric(float64(spent[2].Nanoseconds())/n, "notifier-ns/op")
	b.ReportMetric(float64(spent[1])/float64(max(spent[0], 1)), "provider/registered")
	b.ReportMetric(float64(spent[2])/float64(max(spent[0], 1)), "notifier/registered")
	b.ReportMetric(float64(spent[3].Nanoseconds())/n, "relisted-ns/op")
	// Medians too: on a shared machine one descheduled call moves a mean.
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2])
	}
	reg50 := max(p50(each[0]), 1)
	b.ReportMetric(reg50, "registered-p50-ns")
	b.ReportMetric(p50(each[1])/reg50, "provider/registered-p50")
	b.ReportMetric(p50(each[2])/reg50, "notifier/registered-p50")
	b.ReportMetric(p50(each[3])/reg50, "relisted/registered-p50")
	b.ReportMetric(float64(plain.lists.Load()-lists0), "provider-lists")
	b.ReportMetric(float64(notifying.lists.Load()-nlists0), "notifier-lists")
	for j, name := range []string{"registered", "provider", "notifier", "relisted"} {
		allocs, bytes := perCall(200, calls[j])
		b.ReportMetric(allocs, name+"-allocs/op")
		b.ReportMetric(bytes, name+"-B/op")
	}
}

func mustCall(b *testing.B, s *agenttools.Session, name string, args any) {
	if _, err := s.Call(context.Background(), name, args); err != nil {
		b.Fatal(name, err)
	}
}

// perCall is the allocations and bytes of one call of f, averaged over n.
func perCall(n int, f func()) (allocs, bytes float64) {
	var m0, m1 goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&m0)
	for range n {
		f()
	}
	goruntime.ReadMemStats(&m1)
	return float64(m1.Mallocs-m0.Mallocs) / float64(n), float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)
}
