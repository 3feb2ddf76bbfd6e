package transport

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// testMCPServer has an echo tool and a slow tool that sends progress and
// honours cancellation. Calls go through drain (when non-nil) as the
// runtime's pipeline would.
func testMCPServer(drain *Drain) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ServerOptions{
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
	})
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"ms":{"type":"integer"}}}`)
	through := func(ctx context.Context, run func(ctx context.Context) *pipeline.Response) *pipeline.Response {
		if drain == nil {
			return run(ctx)
		}
		return drain.Middleware()(func(ctx context.Context, _ *pipeline.Request) *pipeline.Response { return run(ctx) })(ctx, &pipeline.Request{})
	}
	s.AddTool(&sdk.Tool{Name: "echo", InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "slow", InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var a struct{ Ms int }
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return nil, err
		}
		text := "done"
		through(ctx, func(ctx context.Context) *pipeline.Response {
			deadline := time.After(time.Duration(a.Ms) * time.Millisecond)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for n := 1; ; n++ {
				select {
				case <-deadline:
					return &pipeline.Response{}
				case <-ctx.Done():
					text = "cancelled"
					return &pipeline.Response{}
				case <-tick.C:
					if tok := req.Params.GetProgressToken(); tok != nil {
						// A client gone mid-call misses a progress report; the call goes on.
						_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(n), Message: "working"})
					}
				}
			}
		})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	return s
}

// logBuffer is a concurrency-safe log sink.
type logBuffer = testutil.SyncBuffer

// start serves o (Server defaulting to testMCPServer) on a loopback httptest server.
func start(t *testing.T, o HTTPOptions) (*HTTP, *httptest.Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if o.Server == nil {
		o.Server = testMCPServer(o.Drain)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	h, err := NewHTTP(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv, logs
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends a JSON-RPC body to /mcp with the usual headers plus hdr.
func post(t *testing.T, base, body string, hdr map[string]string) *http.Response {
	t.Helper()
	return postTo(t, base+MCPPath, body, hdr)
}

// postTo is post to any URL (a profile's endpoint).
func postTo(t *testing.T, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// initSession initializes a session and sends notifications/initialized.
func initSession(t *testing.T, base string, hdr map[string]string) string {
	t.Helper()
	resp := post(t, base, initBody, hdr)
	body := readBody(t, resp)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %q %s", resp.StatusCode, id, body)
	}
	h := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"}
	for k, v := range hdr {
		h[k] = v
	}
	r := post(t, base, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	readBody(t, r)
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", r.StatusCode)
	}
	return id
}

// bearerClient adds an Authorization header to every request.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// connect opens a go-sdk client session over Streamable HTTP.
func connect(t *testing.T, url string, hc *http.Client, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "go-client", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + MCPPath, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// testIssuer is an OpenID Connect issuer in miniature: discovery, a JWKS
// that can rotate, and a signer.
type testIssuer struct {
	srv *httptest.Server

	mu   sync.Mutex
	key  *rsa.PrivateKey
	kid  string
	keys []jose.JSONWebKey // published
	down bool
}

func newIssuer(t *testing.T) *testIssuer {
	t.Helper()
	is := &testIssuer{}
	is.rotate(t, false)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		down := is.down
		is.mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks", "authorization_endpoint": is.srv.URL + "/auth",
			"token_endpoint": is.srv.URL + "/token", "id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: is.keys})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// rotate makes a new signing key; keepOld keeps the old one published.
func (is *testIssuer) rotate(t *testing.T, keepOld bool) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.key = k
	is.kid = rand.Text()[:8]
	pub := jose.JSONWebKey{Key: &k.PublicKey, KeyID: is.kid, Algorithm: "RS256", Use: "sig"}
	if keepOld {
		is.keys = append(is.keys, pub)
	} else {
		is.keys = []jose.JSONWebKey{pub}
	}
}

func (is *testIssuer) setDown(down bool) {
	is.mu.Lock()
	is.down = down
	is.mu.Unlock()
}

// sign issues a JWT; claims override the defaults (iss, aud, sub, exp, iat).
func (is *testIssuer) sign(t *testing.T, claims map[string]any) string {
	t.Helper()
	is.mu.Lock()
	key, kid := is.key, is.kid
	is.mu.Unlock()
	return signWith(t, key, kid, is.srv.URL, claims)
}

func signWith(t *testing.T, key *rsa.PrivateKey, kid, iss string, claims map[string]any) string {
	t.Helper()
	now := time.Now()
	c := map[string]any{"iss": iss, "aud": "agent-tools", "sub": "alice", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
