package transport

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// PerRequestVersion is the first MCP protocol version without sessions
// (no initialize, no Mcp-Session-Id: each request carries its protocol
// version, client info and capabilities in _meta and the
// Mcp-Protocol-Version header). The default endpoint serves it beside the
// session versions (docs/protocol.md).
const PerRequestVersion = "2026-07-28"

// perRequestHeader reports whether an Mcp-Protocol-Version header names a
// per-request version (PerRequestVersion or later, written as a date, as the
// SDK compares them).
func perRequestHeader(v string) bool {
	if len(v) != len("2006-01-02") || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return v >= PerRequestVersion
}

// perRequest reports whether a POST without Mcp-Session-Id on a session
// endpoint is a per-request (2026-07-28) one: its Mcp-Protocol-Version
// header says so. The body is read only when the header is absent or
// older (sessionRequired).
func (h *HTTP) perRequest(r *http.Request) bool {
	return !h.opts.Stateless && r.Header.Get("Mcp-Session-Id") == "" && perRequestHeader(r.Header.Get("Mcp-Protocol-Version"))
}

// sessionRequired answers a stateful POST without Mcp-Session-Id that is
// not an initialize request with 400 and a JSON-RPC error saying what to
// do (the SDK answers it with 200 and an error of code 0). It reports
// whether the request may go on, and whether it goes on as a per-request
// one: a request whose _meta names its protocol version speaks the
// per-request protocol even when its header is missing or disagrees (the
// per-request handler then gives the protocol's own error for that). msg
// is the body's one message (screenBody; nil: a batch, or not a message,
// the SDK's to judge).
func (h *HTTP) sessionRequired(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message) (ok, perRequest bool) {
	if h.opts.Stateless || r.Header.Get("Mcp-Session-Id") != "" {
		return true, false
	}
	req, isReq := msg.(*jsonrpc.Request)
	if !isReq || req.Method == "initialize" {
		return true, false
	}
	if metaVersion(req.Params) != "" {
		return true, true
	}
	infoOf(r).reason = "no_session"
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: "Bad Request: Mcp-Session-Id header is required; send initialize first and pass the Mcp-Session-Id it returns on every later request (or speak protocol version " + PerRequestVersion + ": its version in the Mcp-Protocol-Version header and in each request's _meta, no session)",
	}})
	if err != nil {
		httpError(w, http.StatusBadRequest, "Mcp-Session-Id header is required; send initialize first")
		return false, false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(append(out, '\n'))
	return false, false
}

// metaVersion is the protocol version a request names in its params' _meta
// ("" when none).
func metaVersion(params json.RawMessage) string {
	if len(params) == 0 {
		return ""
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var v string
	if json.Unmarshal(p.Meta[sdk.MetaKeyProtocolVersion], &v) != nil {
		return ""
	}
	return v
}

// noMetadata answers the protected-resource metadata URL of a server without
// inbound auth: 404, saying that nothing needs authorising here.
func noMetadata(w http.ResponseWriter, _ *http.Request) {
	httpError(w, http.StatusNotFound, "no OAuth protected-resource metadata: this server has no inbound auth configured (server.http.tokens or server.http.oidc), so /mcp needs no token")
}
