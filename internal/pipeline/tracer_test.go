package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// recorder is a pipeline.Tracer that logs where each wrapper is entered and left.
type recorder struct{ log []string }

func (r *recorder) Call(next pipeline.Handler) pipeline.Handler {
	return r.wrap("call", next)
}

func (r *recorder) Stage(name string, next pipeline.Handler) pipeline.Handler {
	return r.wrap(name, next)
}

func (r *recorder) wrap(name string, next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
		r.log = append(r.log, ">"+name)
		resp := next(ctx, req)
		r.log = append(r.log, "<"+name)
		return resp
	}
}

func TestTracerWrapsCallAndStagesInOrder(t *testing.T) {
	fake := providertest.New(catalog.ProviderInfo{ID: "svc"}, providertest.Tool("read", "Read", schema, true))
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	rec := &recorder{}
	extra := func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
			rec.log = append(rec.log, "extra")
			return next(ctx, req)
		}
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Tracer: rec, Extra: []pipeline.Middleware{extra}})
	tests := []struct {
		name, args, want string
	}{
		{"ok", `{"n":1}`, ">call >audit extra >loop_guard >resolve >access >validate >policy >execute <execute <policy <validate <access <resolve <loop_guard <audit <call"},
		{"invalid: stages below Validate are not entered", `{"n":"x"}`, ">call >audit extra >loop_guard >resolve >access >validate <validate <access <resolve <loop_guard <audit <call"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.log = nil
			run(context.Background(), &pipeline.Request{Tool: "svc_read", Args: json.RawMessage(tc.args)})
			if got := strings.Join(rec.log, " "); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
