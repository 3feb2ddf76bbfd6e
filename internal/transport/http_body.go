package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
)

// DefaultBodyTimeout is how long a request body may take to arrive
// (server.http.bodyTimeout).
const DefaultBodyTimeout = 30 * time.Second

// A request body has BodyTimeout to arrive, whole. http.Server's
// ReadTimeout cannot say so: it would bound the whole request, and a GET's
// SSE stream lives for hours. The headers have the server's
// ReadHeaderTimeout; the body gets a read deadline of its own, set when the
// handler starts and lifted once the body ended (a POST's SSE answer then
// streams as long as it needs: its connection is not read again until the
// next request, whose headers get the server's deadline anew). A client
// that trickles its body is cut when the deadline passes (408 on /mcp).

// deadlineBody lifts its request's read deadline once the body ended.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

// withBodyDeadline gives r's body d to arrive; r is unchanged when it has
// no body or its connection takes no read deadline (HTTP/2 through a
// writer that cannot say, an embedder's own server).
func withBodyDeadline(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if d <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{}) // the connection is the server's again
	}
	return n, err
}

// isTimeout reports whether err is a read that passed its deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// screenBody reads a POST's body once (it is put back for the SDK) and
// answers, with a JSON-RPC error, what the SDK would answer wrongly or
// never (jsonrpcwire.DecodeStrict): a numeric id it would mangle
// (1.5e308), a message with neither method, result nor error (a mis-cased
// "Method"), a notification with a mis-cased "id". A body cut by its read
// deadline is answered 408. msg is the body's one message when it is one
// (nil for a batch, or what the SDK is left to judge: not JSON, too large,
// a broken body). ok false: the answer is written.
func (h *HTTP) screenBody(w http.ResponseWriter, r *http.Request) (msg jsonrpc.Message, ok bool) {
	size := int64(bytes.MinRead)
	if n := r.ContentLength; n > 0 && n <= h.opts.BodyLimit {
		size += n // one allocation for the whole body
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err := buf.ReadFrom(io.LimitReader(r.Body, h.opts.BodyLimit+1))
	body := buf.Bytes()
	var rest io.Reader = bytes.NewReader(body)
	if err != nil || int64(len(body)) > h.opts.BodyLimit {
		rest = io.MultiReader(rest, r.Body) // what is left, and its error, for the SDK
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{rest, r.Body}
	switch {
	case err != nil && isTimeout(err):
		infoOf(r).reason = "body_timeout"
		w.Header().Set("Connection", "close")
		httpError(w, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %s (server.http.bodyTimeout)", h.opts.BodyTimeout))
		return nil, false
	case err != nil || int64(len(body)) > h.opts.BodyLimit:
		return nil, true // the SDK reports the broken body, or the one too large
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, true
	}
	if trimmed[0] == '[' {
		var raw []json.RawMessage
		if jsonrpcwire.Unmarshal(trimmed, &raw) != nil {
			return nil, true
		}
		for _, e := range raw {
			if _, err := jsonrpcwire.DecodeStrict(e); refuseInvalid(w, r, err) {
				return nil, false
			}
		}
		return nil, true
	}
	msg, err = jsonrpcwire.DecodeStrict(trimmed)
	if refuseInvalid(w, r, err) {
		return nil, false
	}
	if err != nil {
		return nil, true // not a message: the SDK's to answer
	}
	return msg, true
}

// refuseInvalid answers err when it is a jsonrpcwire.Invalid: 400 with the
// JSON-RPC error -32600.
func refuseInvalid(w http.ResponseWriter, r *http.Request, err error) bool {
	var inv *jsonrpcwire.Invalid
	if !errors.As(err, &inv) {
		return false
	}
	infoOf(r).reason = "invalid_request"
	writeRPCError(w, http.StatusBadRequest, inv.ID, jsonrpc.CodeInvalidRequest, inv.Error())
	return true
}

// writeRPCError writes a JSON-RPC error response with the HTTP status;
// without a valid id, "id" is null.
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string) {
	var out []byte
	if id.IsValid() {
		b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message}})
		if err != nil {
			httpError(w, status, message)
			return
		}
		out = b
	} else {
		out = encodeError(id, code, message) // EncodeMessage would leave "id" out
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(out, '\n'))
}
