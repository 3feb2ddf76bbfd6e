package provider_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

type base struct{ bound bool }

func (*base) Info() catalog.ProviderInfo                    { return catalog.ProviderInfo{ID: "b"} }
func (*base) Tools(context.Context) ([]catalog.Tool, error) { return nil, nil }
func (*base) Call(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
	return &provider.Result{}, nil
}
func (b *base) Bind(*slog.Logger, func()) { b.bound = true }

type wrapper struct{ provider.Provider }

func (w wrapper) Unwrap() provider.Provider { return w.Provider }

var (
	_ provider.Notifier  = (*base)(nil)
	_ provider.Unwrapper = wrapper{}
)

func TestAs(t *testing.T) {
	b := &base{}
	tests := []struct {
		name string
		p    provider.Provider
		want bool
	}{
		{"direct", b, true},
		{"wrapped twice", wrapper{wrapper{b}}, true},
	}
	for _, tt := range tests {
		n, ok := provider.As[provider.Notifier](tt.p)
		if ok != tt.want {
			t.Fatalf("%s: ok = %v", tt.name, ok)
		}
		n.Bind(nil, nil)
	}
	if !b.bound {
		t.Error("Bind did not reach the wrapped provider")
	}
	if _, ok := provider.As[provider.Skiller](wrapper{b}); ok {
		t.Error("As found a capability nobody has")
	}
	// A wrapper that wraps itself must not hang.
	var loop loopy
	if _, ok := provider.As[provider.Skiller](&loop); ok {
		t.Error("loop: found")
	}
}

type loopy struct{ base }

func (l *loopy) Unwrap() provider.Provider { return l }

func TestReportProgress(t *testing.T) {
	provider.ReportProgress(context.Background(), 1, 2, "nobody listens") // must not panic
	var got []string
	ctx := provider.WithProgress(context.Background(), func(done, total float64, msg string) {
		got = append(got, msg)
	})
	provider.ReportProgress(ctx, 1, 0, "step one")
	if len(got) != 1 || got[0] != "step one" {
		t.Fatalf("got %q", got)
	}
	if provider.WithProgress(ctx, nil) != ctx {
		t.Error("a nil reporter should leave ctx as is")
	}
}
