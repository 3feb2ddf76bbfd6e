package faults

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// signalBuf is a syncBuf that closes found when re matches what was written.
type signalBuf struct {
	syncBuf
	re    *regexp.Regexp
	once  sync.Once
	found chan string
}

func (s *signalBuf) Write(p []byte) (int, error) {
	n, err := s.syncBuf.Write(p)
	if m := s.re.FindStringSubmatch(s.String()); m != nil {
		s.once.Do(func() { s.found <- m[1] })
	}
	return n, err
}

// TestLoad: concurrent HTTP sessions call a local script that sleeps and
// then prints, while other goroutines keep the CPUs busy. Before the fix,
// 6 of 1,000 such calls came back as successes with empty text. Every call
// must return the script's own line: the count of lost results must be 0.
func TestLoad(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	sessions, calls := 100, 4
	if testing.Short() {
		sessions, calls = 20, 2
	}
	dir := t.TempDir()
	tools := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := "#!/bin/sh\n# @description Sleep, then print a line naming our pid.\nsleep 0.2\necho probe-ok-$$\n"
	if err := os.WriteFile(filepath.Join(tools, "probe"), []byte(probe), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &project{dir: dir, config: filepath.Join(dir, "agent-tools.yaml"), audit: filepath.Join(dir, "audit.jsonl")}
	cfg := fmt.Sprintf("mode: flat\nlocal:\n  requireConfirm: false\nserver:\n  http:\n    tokens: [\"${FAULTS_HDR_SECRET}\"]\n    rateLimit: {off: true}\naudit:\n  path: %q\n", p.audit)
	if err := os.WriteFile(p.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	url, stderr, stopServe := serveHTTP(t, p)
	defer stopServe()
	token := canaries["FAULTS_HDR_SECRET"]
	hc := &http.Client{Transport: bearer{token}}

	// CPU pressure: one spinning goroutine per CPU for the duration.
	stop := make(chan struct{})
	var spin sync.WaitGroup
	for range goruntime.NumCPU() {
		spin.Go(func() {
			for x := 0; ; x++ {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 100000; i++ {
					x ^= i
				}
			}
		})
	}

	var ok, lost, failed atomic.Int64
	var mu sync.Mutex
	var samples []string
	var wg sync.WaitGroup
	for range sessions {
		wg.Go(func() {
			cctx, ccancel := context.WithTimeout(ctx, 120*time.Second)
			defer ccancel()
			c := sdk.NewClient(&sdk.Implementation{Name: "load", Version: "1"}, nil)
			cs, err := c.Connect(cctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
			if err != nil {
				failed.Add(int64(calls))
				mu.Lock()
				samples = append(samples, "connect: "+err.Error())
				mu.Unlock()
				return
			}
			defer cs.Close()
			for range calls {
				res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "probe", Arguments: map[string]any{}})
				var text string
				if err == nil {
					for _, c := range res.Content {
						if tc, ok := c.(*sdk.TextContent); ok {
							text += tc.Text
						}
					}
				}
				switch {
				case err != nil || res.IsError:
					failed.Add(1)
					mu.Lock()
					samples = append(samples, fmt.Sprintf("%v %.200s", err, text))
					mu.Unlock()
				case !strings.HasPrefix(text, "probe-ok-"):
					lost.Add(1) // a success without the output the script printed
					mu.Lock()
					samples = append(samples, fmt.Sprintf("lost: %q", text))
					mu.Unlock()
				default:
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	spin.Wait()

	total := sessions * calls
	if lost.Load() != 0 || failed.Load() != 0 || ok.Load() != int64(total) {
		t.Errorf("%d calls: %d ok, %d lost, %d failed; e.g. %q", total, ok.Load(), lost.Load(), failed.Load(), samples[:min(5, len(samples))])
	}

	// A wrong token is refused (and counted), and nothing shows the token.
	bad, err := (&http.Client{Transport: bearer{"wrong-token-value"}}).Post(url, "application/json", strings.NewReader(`{}`))
	if err == nil {
		bad.Body.Close()
		if bad.StatusCode != http.StatusUnauthorized {
			t.Errorf("wrong token: %d", bad.StatusCode)
		}
	}
	metrics := ""
	if resp, err := hc.Get(strings.TrimSuffix(url, "/mcp") + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		metrics = string(b)
	}
	if !strings.Contains(metrics, "probe") {
		t.Errorf("metrics do not count the calls:\n%.500s", metrics)
	}
	stopServe()
	audit, _ := os.ReadFile(p.audit)
	noCanary(t, "metrics", metrics)
	noCanary(t, "stderr", stderr.String())
	noCanary(t, "audit", string(audit))
	record(fmt.Sprintf("load: %d HTTP sessions × %d calls, CPU pressure", sessions, calls), 1,
		fmt.Sprintf("%d ok, %d lost, %d failed", ok.Load(), lost.Load(), failed.Load()))
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// serveHTTP runs `agent-tools serve --http` in process for p on a free
// loopback port and returns its /mcp URL, its stderr, and a stop that ends
// it (and waits, bounded); the test's cleanup stops it too.
func serveHTTP(t *testing.T, p *project) (string, *signalBuf, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &signalBuf{re: regexp.MustCompile(`url=(http://127\.0\.0\.1:[0-9]+/mcp)`), found: make(chan string, 1)}
	done := make(chan int, 1)
	go func() {
		done <- runCLI(ctx, p.env(strings.NewReader(""), io.Discard, stderr), []string{"serve", "--http", "--addr", "127.0.0.1:0", "--config", p.config})
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Error("the runtime did not stop")
			}
		})
	}
	t.Cleanup(stop)
	select {
	case url := <-stderr.found:
		return url, stderr, stop
	case code := <-done:
		t.Fatalf("serve exited %d:\n%s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", stderr.String())
	}
	return "", nil, stop
}
