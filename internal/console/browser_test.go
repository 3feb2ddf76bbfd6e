package console_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/console"
	"github.com/agent-tools/agent-tools/internal/metrics"
)

// upstreamCalls are the calls made to the upstream in each step of the
// activity window the browser test samples.
var upstreamCalls = []int{2, 0, 3, 1, 4, 0, 0, 5, 2, 3, 1, 0, 4, 2, 3}

// chromium finds a Chromium or Chrome binary (Debian package chromium).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts headless Chromium for one test (closed at its end), with
// a window of w×h and a minute for everything the test does.
func browser(t *testing.T, bin string, w, h int) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(w, h))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancel(); cancelB(); cancelA() })
	return ctx
}

// TestConsoleInABrowser drives the console in headless Chromium: log in
// through the one-time link, toggle a provider, restart a real stdio MCP
// upstream (its restart count becomes 1, its state back to ready), search,
// submit the try-a-call form (a validation error, then a call), see the
// activity charts and the audit line live, check the CSP and CSRF
// refusals, approve a mutation a real MCP client waits for, with a
// screenshot of each page in the test's artifact directory.
func TestConsoleInABrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium binary on PATH (Debian: apt-get install chromium)")
	}
	// Beside the working upstream, one that cannot start and one switched
	// off: every state shows in the Providers page (and its screenshot).
	cfg := "policy: {confirm: human}\n" + upstreamConfig(t) +
		"  - {id: broken, kind: mcp, command: ./does-not-exist}\n" +
		"  - {id: spare, kind: mcp, command: ./does-not-exist, enabled: false}\n"
	f := newFixtureWith(t, cfg, &console.Approvals{Timeout: time.Minute})
	ctx := browser(t, bin, 1200, 900)

	dir := t.ArtifactDir()
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			png, err := chromedp.FullScreenshot(100)(ctx, tg) // 100: PNG; less is JPEG
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
		})
	}
	text := func(sel string, dst *string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
			*dst, err = chromedp.Text(chromedp.CSS(sel))(ctx, tg)
			return err
		})
	}
	greet := f.canonical("greet")
	listChanged := make(chan struct{}, 1)
	watcher := f.connect(ctx, listChanged)
	var listedOff, listedOn bool // greet in the client's tools/list after each toggle
	clientSees := func(dst *bool) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			select {
			case <-listChanged:
			case <-ctx.Done():
				return fmt.Errorf("no tools/list_changed after the toggle: %w", ctx.Err())
			}
			res, err := watcher.ListTools(ctx, nil)
			if err != nil {
				return err
			}
			*dst = slices.ContainsFunc(res.Tools, func(tl *sdk.Tool) bool { return tl.Name == greet })
			return nil
		})
	}
	var loginText, toolsText, invalid, called, activity, restarts, chartText, tokenText string
	var bars, dots int
	var inlineBlocked bool
	var weight string
	var csrfStatus int
	err := chromedp.Do(ctx,
		// Without the link: the login page, no console.
		chromedp.Navigate(f.srv.URL+"/ui/"),
		text("main", &loginText),
		chromedp.Navigate(f.srv.URL+f.con.LoginPath()),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-provider="demo"] .state-ready`)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
			// Figures for the report, not asserted: page weight and first paint.
			// The paint entry can be queued after the page is visible: an
			// observer with buffered entries waits for it (at most 2 s).
			weight, err = chromedp.Evaluate[string](`new Promise(resolve => {
				const nav = performance.getEntriesByType("navigation")[0];
				const done = fcp => resolve(JSON.stringify({firstContentfulPaintMs: fcp,
					domContentLoadedMs: Math.round(nav.domContentLoadedEventEnd),
					bytes: nav.decodedBodySize + performance.getEntriesByType("resource").reduce((s, e) => s + e.decodedBodySize, 0)}));
				const seen = performance.getEntriesByName("first-contentful-paint")[0];
				if (seen) return done(Math.round(seen.startTime));
				new PerformanceObserver(l => {
					const e = l.getEntriesByName("first-contentful-paint")[0];
					if (e) done(Math.round(e.startTime));
				}).observe({type: "paint", buffered: true});
				setTimeout(() => done(-1), 2000);
			})`, chromedp.EvalAwaitPromise)(ctx, tg)
			return err
		}),
		// Restart the upstream: the click marks it starting, the answer
		// comes once the new process runs, and the page reloads.
		chromedp.WaitVisible(chromedp.CSS(`tr[data-provider="up"] .state-ready`)),
		chromedp.Click(chromedp.CSS(`button.restart[data-provider="up"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-provider="up"] .state-ready`)),
		text(`tr[data-provider="up"] [data-field="restarts"]`, &restarts),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-provider="broken"] .state-failed`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-provider="spare"] .state-disabled`)),
		shot("providers"),
		// Toggling in the page reaches a connected MCP client: list_changed,
		// and its tools/list loses the provider's tools, then has them back.
		chromedp.Func(func(context.Context, *chromedp.Target) error {
			select { // only the toggles' notifications count
			case <-listChanged:
			default:
			}
			return nil
		}),
		chromedp.Click(chromedp.CSS(`button.toggle[data-provider="demo"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-provider="demo"] .state-disabled`)),
		clientSees(&listedOff),
		chromedp.Click(chromedp.CSS(`button.toggle[data-provider="demo"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-provider="demo"] .state-ready`)),
		clientSees(&listedOn),
		// Search with the model's index.
		chromedp.Navigate(f.srv.URL+"/ui/tools"),
		chromedp.SendKeys(chromedp.CSS(`input[name="q"]`), "greet a person"),
		chromedp.Submit(chromedp.CSS(`form.search`)),
		chromedp.WaitVisible(chromedp.CSS(`td.score`)),
		text("#hits", &toolsText),
		shot("tools"),
		// The form: a validation error first (required name left empty), then a call.
		chromedp.Navigate(f.srv.URL+"/ui/tools/"+greet),
		chromedp.WaitVisible(chromedp.CSS(`#call-form`)),
		chromedp.Click(chromedp.CSS(`#call-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#call-result.is-error`)),
		text("#call-result", &invalid),
		chromedp.SendKeys(chromedp.CSS(`#arg-name`), "Ada"),
		chromedp.Click(chromedp.CSS(`#call-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#call-result.is-ok`)),
		text("#call-result", &called),
		shot("tool"),
		// Calls to the upstream from the page's own script, over several
		// steps of the activity window (sampled by the test: no waiting for
		// its ticker).
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			base := time.Now().Add(-time.Duration(len(upstreamCalls)) * metrics.DefaultWindowStep)
			for i, n := range upstreamCalls {
				if n > 0 {
					if _, err := chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`Promise.all(Array.from({length: %d}, () => send("POST", "/ui/api/call", {tool: "up_pid"})))`, n),
						chromedp.EvalAwaitPromise)(ctx, tg); err != nil {
						return err
					}
				}
				if err := f.win.Sample(base.Add(time.Duration(i) * metrics.DefaultWindowStep)); err != nil {
					return err
				}
			}
			return nil
		}),
		// The charts and the audit tail: the calls, live over SSE.
		chromedp.Navigate(f.srv.URL+"/ui/activity"),
		chromedp.WaitVisible(chromedp.CSS(`figure.chart[data-provider="up"] circle.pt-p95`)),
		chromedp.WaitVisible(chromedp.CSS(`figure.chart[data-provider="demo"] rect.bar-errors`)),
		text(`figure.chart[data-provider="up"] figcaption`, &chartText),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
			if bars, err = chromedp.Evaluate[int](`document.querySelectorAll('figure.chart[data-provider="up"] rect.bar-calls').length`)(ctx, tg); err != nil {
				return err
			}
			dots, err = chromedp.Evaluate[int](`document.querySelectorAll('figure.chart[data-provider="up"] circle').length`)(ctx, tg)
			return err
		}),
		chromedp.WaitVisible(chromedp.CSS(`#audit tbody tr.is-error`)),
		chromedp.WaitVisible(chromedp.CSS(`#audit tbody tr.ok`)),
		text("#audit", &activity),
		// The result-token totals: a table per tool (and identity) and its chart.
		chromedp.WaitVisible(chromedp.CSS(`#tokens table.tokens[data-by="tool"] tbody tr`)),
		chromedp.WaitVisible(chromedp.CSS(`#tokens svg.chart-tokens rect.bar-calls`)),
		text(`#tokens table.tokens[data-by="tool"]`, &tokenText),
		shot("activity"),
		// The browser enforces the CSP (an injected inline script does not
		// run) and the server refuses a cookie mutation without the CSRF token.
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
			inlineBlocked, err = chromedp.Evaluate[bool](`(() => { const s = document.createElement("script");
				s.textContent = "window.__inline = 1"; document.body.appendChild(s); return window.__inline === undefined; })()`)(ctx, tg)
			if err != nil {
				return err
			}
			csrfStatus, err = chromedp.Evaluate[int](`fetch("/ui/api/providers/demo", {method: "PUT", body: '{"enabled":false}'}).then(r => r.status)`,
				chromedp.EvalAwaitPromise)(ctx, tg)
			return err
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Approve a pending mutation while a real MCP client waits for it.
	cs := f.connect(ctx, nil)
	done := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: f.canonical("wipe"), Arguments: map[string]any{}})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- res.Content[0].(*sdk.TextContent).Text
	}()
	err = chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+"/ui/approvals"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-approval] button.approve`)),
		shot("approvals"),
	)
	if err != nil {
		t.Fatal(err)
	}
	clicked := time.Now()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr[data-approval] button.approve`))); err != nil {
		t.Fatal(err)
	}
	got := <-done
	t.Logf("providers page: %s; approval round trip (click to the MCP client's answer): %s", weight, time.Since(clicked).Round(time.Millisecond))
	total, steps := 0, 0
	for _, n := range upstreamCalls {
		total += n
		if n > 0 {
			steps++
		}
	}
	if got != "wiped" || f.demo.wiped.Load() != 1 {
		t.Fatalf("the approved call answered %q (ran %d times)", got, f.demo.wiped.Load())
	}
	if !inlineBlocked {
		t.Error("an inline script ran: the CSP is not enforced")
	}
	if csrfStatus != http.StatusForbidden {
		t.Errorf("a cookie PUT without the CSRF token: %d, want 403", csrfStatus)
	}
	if listedOff || !listedOn {
		t.Errorf("the MCP client listed %s: %v after Disable, %v after Enable; want false, true", greet, listedOff, listedOn)
	}
	checks := []struct{ what, got, want string }{
		{"login page", loginText, "login link"},
		{"search", toolsText, greet},
		{"validation error", invalid, "INVALID_ARGUMENTS"},
		{"call", called, "hello Ada"},
		{"activity", activity, greet},
		{"restart count", restarts, "1"},
		{"chart caption", chartText, fmt.Sprintf("%d calls, 0 errors", total)},
		{"token totals", tokenText, greet},
	}
	// A bar per step with calls, and a p50 and a p95 dot for each.
	if bars != steps || dots != 2*steps {
		t.Errorf("the upstream's charts: %d bars, %d dots; want %d and %d", bars, dots, steps, 2*steps)
	}
	for _, c := range checks {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%s: %q lacks %q", c.what, c.got, c.want)
		}
	}
	t.Logf("screenshots in %s", dir)
}
