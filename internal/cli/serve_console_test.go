package cli

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// TestServeHTTPConsole: without tokens, serve --http prints a one-time
// login link that gives a console session; --no-ui serves no /ui.
func TestServeHTTPConsole(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		wantUI bool
	}{
		{"console", nil, true},
		{"no-ui", []string{"--no-ui"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, _, stderr := testEnv(t, nil)
			mustWrite(t, filepath.Join(env.Dir, "agent-tools.yaml"), []byte("mode: flat\nlocal: {enabled: false}\n"), 0o644)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int, 1)
			go func() {
				done <- Run(ctx, env, append([]string{"serve", "--http", "--addr", "127.0.0.1:0"}, tc.args...))
			}()
			defer func() {
				cancel()
				select {
				case <-done:
				case <-time.After(15 * time.Second):
					t.Error("serve did not stop")
				}
			}()
			listening := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/mcp`)
			var base string
			testutil.WaitFor(t, "the listening line", 10*time.Second, func() bool {
				m := listening.FindStringSubmatch(stderr.String())
				if m != nil {
					base = m[1]
				}
				return m != nil
			})
			link := regexp.MustCompile(`console: open (http://\S+/ui/login\?token=[0-9a-f]{64})`).FindStringSubmatch(stderr.String())
			if (link != nil) != tc.wantUI {
				t.Fatalf("login link printed: %v, want %v\n%s", link != nil, tc.wantUI, stderr)
			}
			cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			if !tc.wantUI {
				res, err := cl.Get(base + "/ui/")
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusNotFound {
					t.Fatalf("/ui with --no-ui: %d", res.StatusCode)
				}
				return
			}
			res, err := cl.Get(link[1])
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
				t.Fatalf("login link: %d %v", res.StatusCode, res.Cookies())
			}
			req, _ := http.NewRequest("GET", base+"/ui/api/providers", nil)
			req.AddCookie(res.Cookies()[0])
			res, err = cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("providers with the cookie: %d", res.StatusCode)
			}
		})
	}
}
