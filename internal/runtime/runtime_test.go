package runtime

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/native"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func TestMain(m *testing.M) { os.Exit(testutil.RunIsolated(m)) }

// closer is an added provider that counts its Close.
type closer struct {
	*native.Provider
	closes int
}

func (c *closer) Close() error { c.closes++; return nil }

var _ provider.Closer = (*closer)(nil)

// TestPhases: App is nil until Start; what must come before Start is
// refused after it; Close closes the added providers once, however often
// it is called.
func TestPhases(t *testing.T) {
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	np, err := native.New(catalog.ProviderInfo{ID: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	c := &closer{Provider: np}
	if err := r.AddProvider(c, false); err != nil {
		t.Fatal(err)
	}
	if r.App() != nil {
		t.Error("App before Start is not nil")
	}
	if _, err := r.Default().Call(context.Background(), "svc_x", nil); err != ErrNotStarted {
		t.Errorf("a call before Start: %v", err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.App() == nil {
		t.Fatal("App after Start is nil")
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"Start twice", r.Start(context.Background()), "twice"},
		{"a plugin after Start", r.AddPlugin("late", PluginOptions{}), "before Start"},
		{"a provider after Start", r.AddProvider(c, false), "before Start"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	for range 2 {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if c.closes != 1 {
		t.Errorf("the added provider was closed %d times, want 1", c.closes)
	}
}

// TestSessionCall: a session's call takes the pipeline and a failure is
// the pipeline's *toolerr.Error, as the public package expects.
func TestSessionCall(t *testing.T) {
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.AddTool("svc", native.Tool{Name: "write", Description: "Write.",
		Handler: func(context.Context, json.RawMessage) (*provider.Result, error) {
			return &provider.Result{Text: "ok"}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := r.NewSession(SessionOptions{})
	defer s.Close()
	for _, tc := range []struct {
		args string
		code toolerr.Code // "" for success
	}{
		{`{}`, toolerr.ConfirmationRequired},
		{`{"agent_tools_confirm": true}`, ""},
		{`{"agent_tools_confirm": 7}`, toolerr.InvalidArguments},
	} {
		res, err := s.Call(context.Background(), "svc_write", json.RawMessage(tc.args))
		te, _ := toolerr.As(err)
		switch {
		case tc.code == "" && (err != nil || res.Text != "ok"):
			t.Errorf("%s: %v, %v", tc.args, res, err)
		case tc.code != "" && (te == nil || te.Code != tc.code):
			t.Errorf("%s: %v, want %s", tc.args, err, tc.code)
		}
	}
}
