package transport

import (
	"bytes"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
)

// sessionRequired answers a stateful POST without Mcp-Session-Id that is
// not an initialize request with 400 and a JSON-RPC error saying what to
// do (the SDK answers it with 200 and an error of code 0). It reports
// whether the request may go on; the body it read is put back.
func (h *HTTP) sessionRequired(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.Stateless || r.Header.Get("Mcp-Session-Id") != "" {
		return true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.opts.BodyLimit+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil {
		return true // the SDK reports the broken body
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return true // empty, a batch or not JSON: the SDK's to judge
	}
	msg, err := jsonrpcwire.Decode(trimmed) // as jsonrpc.DecodeMessage, without its two 32 KiB buffers
	if err != nil {
		return true
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method == "initialize" {
		return true
	}
	infoOf(r).reason = "no_session"
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: "Bad Request: Mcp-Session-Id header is required; send initialize first and pass the Mcp-Session-Id it returns on every later request",
	}})
	if err != nil {
		httpError(w, http.StatusBadRequest, "Mcp-Session-Id header is required; send initialize first")
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(append(out, '\n'))
	return false
}

// noMetadata answers the protected-resource metadata URL of a server without
// inbound auth: 404, saying that nothing needs authorising here.
func noMetadata(w http.ResponseWriter, _ *http.Request) {
	httpError(w, http.StatusNotFound, "no OAuth protected-resource metadata: this server has no inbound auth configured (server.http.tokens or server.http.oidc), so /mcp needs no token")
}
