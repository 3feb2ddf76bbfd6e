// Command conformance-client is the client under test of the MCP
// conformance suite's client scenarios (@modelcontextprotocol/conformance):
// the suite starts a server, then runs this command with the server's URL
// as its last argument and the scenario in MCP_CONFORMANCE_SCENARIO (and,
// for client credentials and pre-registration, its JSON context in
// MCP_CONFORMANCE_CONTEXT).
//
// It configures one HTTP `kind: mcp` upstream at the URL, with the auth
// block the scenario calls for, and drives it through the runtime's own
// upstream provider (internal/provider/mcp) and token code
// (internal/upstreamauth) — the code `serve` uses — completing the
// authorization flow headlessly (the suite's authorization server
// redirects at once), then lists the tools and calls the ones the scenario
// expects. Build: go build -o conformance-client ./interop/conformance-client
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// clientMetadataURL is the Client ID Metadata Document URL the suite's
// basic-cimd scenario expects a client to present (a real deployment sets
// auth.clientMetadataUrl to the document it hosts; see the README's
// "Remote servers that need a login").
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-client <server-url>")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, scenario, url); err != nil {
		fmt.Fprintf(os.Stderr, "conformance-client: %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

type conformanceContext struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	PrivateKeyPEM string `json:"private_key_pem"`
	SigningAlg    string `json:"signing_algorithm"`
	// cross-app access (SEP-990)
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPIssuer        string `json:"idp_issuer"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
}

func run(ctx context.Context, scenario, url string) error {
	var cc conformanceContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	spec := &mcp.Spec{URL: url}
	opts := mcp.Options{Header: provider.Header{ID: "upstream"}, URL: url, Logger: log, CacheDir: os.TempDir() + "/agent-tools-conformance-nocache",
		StartTimeout: 20 * time.Second, ListWait: 20 * time.Second}
	if strings.HasPrefix(scenario, "auth/") {
		a := &mcp.Auth{Type: "oauth", ClientID: cc.ClientID, ClientSecret: cc.ClientSecret, ClientMetadataURL: clientMetadataURL}
		var pem []byte
		if strings.HasPrefix(scenario, "auth/client-credentials") {
			a.Type, a.ClientMetadataURL = "client_credentials", ""
			pem = []byte(cc.PrivateKeyPEM)
		}
		if cc.IdPIDToken != "" {
			a.Type, a.ClientMetadataURL = "cross_app", ""
			a.IdPIssuer, a.IdPClientID, a.IDToken = cc.IdPIssuer, cc.IdPClientID, cc.IdPIDToken
		}
		spec.Auth = a
		h, err := authHandler(spec, pem, cc.SigningAlg, cc.IdPTokenEndpoint)
		if err != nil {
			return err
		}
		opts.OAuth = h
	}
	p := mcp.New(opts)
	defer p.Close()

	want := map[string]string{
		"tools_call":                          "add_numbers",
		"elicitation-sep1034-client-defaults": "test_client_elicitation_defaults",
		"sse-retry":                           "test_reconnection",
	}[scenario]
	if strings.HasPrefix(scenario, "auth/") {
		want = "test-tool"
	}
	if scenario == "elicitation-sep1034-client-defaults" {
		return elicitation(ctx, p, want)
	}
	tools, err := p.Tools(ctx)
	if err != nil {
		return fmt.Errorf("listing tools: %w", err)
	}
	fmt.Fprintf(os.Stderr, "listed %d tools\n", len(tools))
	if want == "" {
		return nil
	}
	for _, t := range tools {
		if t.Name != want {
			continue
		}
		args := json.RawMessage(`{}`)
		if want == "add_numbers" {
			args = json.RawMessage(`{"a":5,"b":3}`)
		}
		res, err := p.Call(ctx, t, args)
		if err != nil {
			return fmt.Errorf("calling %s: %w", want, err)
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", want, res.Text)
		return nil
	}
	return fmt.Errorf("tool %q not listed", want)
}

// authHandler is the upstream's auth handler as serve builds it, with a
// headless login and an in-memory store.
func authHandler(spec *mcp.Spec, pem []byte, alg, idpTokenURL string) (*upstreamauth.Handler, error) {
	a := spec.Auth
	return upstreamauth.New(upstreamauth.Config{
		Provider: "upstream", URL: spec.URL, Type: a.Type,
		ClientID: a.ClientID, ClientSecret: a.ClientSecret, Scopes: a.Scopes,
		ClientMetadataURL: a.ClientMetadataURL, RedirectURL: "http://127.0.0.1:3000/callback",
		PrivateKey: pem, SigningAlg: alg,
		IdPIssuer: a.IdPIssuer, IdPClientID: a.IdPClientID, IdPClientSecret: a.IdPClientSecret,
		IDToken: staticIDToken(a.IDToken), IdPTokenURL: idpTokenURL,
		Store: &upstreamauth.MemStore{}, Login: upstreamauth.Headless(http.DefaultClient),
	})
}

// elicitation calls the tool on a session of the provider that answers
// elicitations (the shared session relays none): accepting with no
// content, so that the SDK applies the schema's defaults (SEP-1034).
func elicitation(ctx context.Context, p *mcp.Provider, tool string) error {
	cs, err := p.OpenSession(ctx, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	}, nil, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{}}); err != nil {
		return fmt.Errorf("calling %s: %w", tool, err)
	}
	return nil
}

func staticIDToken(tok string) func(context.Context) (string, error) {
	if tok == "" {
		return nil
	}
	return func(context.Context) (string, error) { return tok, nil }
}

var _ = catalog.Tool{}
