package mcp

import (
	"testing"

	"github.com/agent-tools/agent-tools/internal/provider"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestDescriptionDefaultsToTheUpstreamsOwnWords(t *testing.T) {
	tests := []struct {
		name string
		init *sdk.InitializeResult
		want string
	}{
		{"unknown yet", nil, "MCP server run by node (it has not described itself yet)"},
		{"title and instructions", &sdk.InitializeResult{ServerInfo: &sdk.Implementation{Name: "mcp-servers/everything", Title: "Everything"},
			Instructions: "Testing server. It exercises every protocol feature.\nMore."}, "Everything: Testing server."},
		{"instructions that are a manual", &sdk.InitializeResult{ServerInfo: &sdk.Implementation{Name: "mcp-servers/everything", Title: "Everything Reference Server"},
			Instructions: "# Everything Server – Server Instructions\n\nAudience: ..."}, "Everything Reference Server"},
		{"name only", &sdk.InitializeResult{ServerInfo: &sdk.Implementation{Name: "secure-filesystem-server", Version: "1"}}, "secure-filesystem-server"},
		{"instructions only", &sdk.InitializeResult{Instructions: "  Knowledge graph memory\n"}, "Knowledge graph memory"},
		{"nothing said", &sdk.InitializeResult{ServerInfo: &sdk.Implementation{}}, "MCP server run by node (it has not described itself yet)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Options{Header: provider.Header{ID: "ev"}, Command: "/usr/bin/node", Args: []string{"--token=secret"}})
			p.init = tt.init
			if got := p.Info().Description; got != tt.want {
				t.Fatalf("description = %q, want %q", got, tt.want)
			}
		})
	}
	p := New(Options{Header: provider.Header{ID: "ev", Description: "Reference server"}, Command: "node"})
	p.init = &sdk.InitializeResult{ServerInfo: &sdk.Implementation{Name: "x"}}
	if got := p.Info().Description; got != "Reference server" {
		t.Fatalf("the config's description must win, got %q", got)
	}
}
