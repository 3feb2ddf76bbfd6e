package mcp

import (
	"net/url"
	"slices"

	"github.com/agent-tools/agent-tools/internal/config"
)

// Auth is the authorization of an HTTP kind mcp upstream (the MCP
// authorization spec): "oauth", a person's login by OAuth 2.1 with PKCE,
// discovered from the server (agent-tools auth login <provider>); or
// "client_credentials", a machine's own credentials.
type Auth struct {
	Type         string   `json:"type" yaml:"type"`
	ClientID     string   `json:"clientId,omitempty" yaml:"clientId,omitempty"`
	ClientSecret string   `json:"clientSecret,omitempty" yaml:"clientSecret,omitempty"`
	Scopes       []string `json:"scopes,omitempty" yaml:"scopes,omitempty"`
	// RedirectPort is the loopback port of the login's callback (0: any
	// free port; set it when the client id is registered with a fixed
	// redirect URL).
	RedirectPort int `json:"redirectPort,omitempty" yaml:"redirectPort,omitempty"`
	// PrivateKeyFile is a PEM key for private_key_jwt (client_credentials).
	PrivateKeyFile string `json:"privateKeyFile,omitempty" yaml:"privateKeyFile,omitempty"`
	// ClientMetadataURL is a Client ID Metadata Document URL, used as the
	// client id where the authorization server supports it.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty" yaml:"clientMetadataUrl,omitempty"`
	// Cross-app access (type cross_app, SEP-990): the enterprise IdP, this
	// client's id (and secret) there, and the person's ID token from it
	// (via ${ENV}, from the enterprise's sign-in).
	IdPIssuer       string `json:"idpIssuer,omitempty" yaml:"idpIssuer,omitempty"`
	IdPClientID     string `json:"idpClientId,omitempty" yaml:"idpClientId,omitempty"`
	IdPClientSecret string `json:"idpClientSecret,omitempty" yaml:"idpClientSecret,omitempty"`
	IDToken         string `json:"idToken,omitempty" yaml:"idToken,omitempty"`
}

var mcpAuthTypes = []string{"oauth", "client_credentials", "cross_app"}

func validateAuth(v *config.Validator, ap string, m *Spec) {
	a := m.Auth
	if a == nil || v.Bad(ap) {
		return
	}
	if m.URL == "" {
		v.Keyf(ap, `"auth" applies only to HTTP servers (with "url")`)
		return
	}
	if !slices.Contains(mcpAuthTypes, a.Type) {
		v.Errf(ap+".type", "auth.type must be %s", config.OrList(mcpAuthTypes))
		return
	}
	if a.RedirectPort < 0 || a.RedirectPort > 65535 {
		v.Errf(ap+".redirectPort", "redirectPort must be a port (0-65535)")
	}
	if a.ClientMetadataURL != "" {
		if u, err := url.Parse(a.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
			v.Errf(ap+".clientMetadataUrl", "clientMetadataUrl must be an https URL with a path")
		}
	}
	if a.Type != "cross_app" {
		for k, set := range map[string]bool{"idpIssuer": a.IdPIssuer != "", "idpClientId": a.IdPClientID != "", "idpClientSecret": a.IdPClientSecret != "", "idToken": a.IDToken != ""} {
			if set {
				v.Keyf(ap+"."+k, "%q applies to type cross_app", k)
			}
		}
	}
	switch a.Type {
	case "cross_app":
		for k, set := range map[string]bool{"clientId": a.ClientID != "", "idpIssuer": a.IdPIssuer != "", "idpClientId": a.IdPClientID != "", "idToken": a.IDToken != ""} {
			if !set {
				v.Errf(ap, "auth type cross_app needs %q", k)
			}
		}
	case "oauth":
		if a.PrivateKeyFile != "" {
			v.Keyf(ap+".privateKeyFile", `"privateKeyFile" applies to type client_credentials`)
		}
		if a.ClientSecret != "" && a.ClientID == "" {
			v.Errf(ap, `auth.clientSecret needs auth.clientId`)
		}
	case "client_credentials":
		if a.ClientID == "" {
			v.Errf(ap, `auth type client_credentials needs "clientId"`)
		}
		switch {
		case a.ClientSecret == "" && a.PrivateKeyFile == "":
			v.Errf(ap, `auth type client_credentials needs "clientSecret" or "privateKeyFile"`)
		case a.ClientSecret != "" && a.PrivateKeyFile != "":
			v.Keyf(ap+".privateKeyFile", `set "clientSecret" or "privateKeyFile", not both`)
		}
	}
}

func redactAuth(a *Auth) *Auth {
	if a == nil {
		return nil
	}
	r := *a
	for _, f := range []*string{&r.ClientSecret, &r.IdPClientSecret, &r.IDToken} {
		if *f != "" {
			*f = "***"
		}
	}
	return &r
}
