package app

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/transport"
)

// HTTPOptions are the Streamable HTTP transport's options from the live
// config's server.http, for this app's MCP server: the one mapping that
// `serve --http` and the embedding package's Handler share. Callers add
// what is theirs (Drain, Metrics, Logger, a --stateless override).
func (a *App) HTTPOptions() transport.HTTPOptions {
	hc := a.Config().Server.HTTP
	rate := float64(hc.RateLimit.PerSecond)
	if hc.RateLimit.Off {
		rate = -1
	}
	return transport.HTTPOptions{
		Server: a.Facade.Server(), Addr: hc.Addr, Stateless: hc.Stateless, JSONResponse: hc.JSONResponse,
		Tokens: hc.Tokens, TokenNames: hc.TokenNames, TokenUses: hc.TokenUses, OIDC: transport.OIDCOptions{Issuer: hc.OIDC.Issuer, Audience: hc.OIDC.Audience, ClockSkew: hc.OIDC.ClockSkew.Duration},
		Resource: hc.Resource, AllowedOrigins: hc.AllowedOrigins, AllowedHosts: hc.AllowedHosts,
		BodyLimit: int64(hc.BodyLimit), BodyTimeout: hc.BodyTimeout.Duration, RatePerSecond: rate, RateBurst: hc.RateLimit.Burst,
		SessionTimeout: hc.SessionTimeout.Duration, ShutdownGrace: hc.ShutdownGrace.Duration,
		Profile: a.profileServer, Profiles: a.Profiles, ClaimNames: a.claimNames, // profiles.go
	}
}

// profileServer is the MCP server of a profile, for /mcp/p/<slug>.
func (a *App) profileServer(slug string) (*sdk.Server, bool) {
	f, ok := a.ProfileFacade(slug)
	if !ok {
		return nil, false
	}
	return f.Server(), true
}
