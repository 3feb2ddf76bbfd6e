package transport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Failed authentication is limited per client address, whatever the rate
// limit setting: a caller guessing tokens gets AuthFailureBurst tries, then
// one more every AuthFailureEvery; until then it is refused (429) without
// the token being checked at all.
const (
	AuthFailureBurst = 20
	AuthFailureEvery = 3 * time.Second
)

// failLimiter counts failed authentications per address (token buckets that
// only failures drain), reusing limiter's bookkeeping of idle buckets.
type failLimiter struct{ l *limiter }

func newFailLimiter(now func() time.Time) *failLimiter {
	return &failLimiter{l: newLimiter(float64(time.Second)/float64(AuthFailureEvery), AuthFailureBurst, now)}
}

// fail records one failed authentication from addr.
func (f *failLimiter) fail(addr string) { f.l.allow(addr) }

// blocked says whether addr has used up its failures, and for how long.
func (f *failLimiter) blocked(addr string) (bool, time.Duration) {
	now := f.l.now()
	f.l.mu.Lock()
	defer f.l.mu.Unlock()
	b := f.l.buckets[addr]
	if b == nil {
		return false, 0
	}
	if tokens := b.lim.TokensAt(now); tokens < 1 {
		return true, time.Duration((1 - tokens) * float64(AuthFailureEvery))
	}
	return false, 0
}

// failedAuthAllowed refuses (429) an address that failed authentication
// too often; on refusal it has written the answer.
func (h *HTTP) failedAuthAllowed(w http.ResponseWriter, r *http.Request, addr string) bool {
	blocked, wait := h.failedAuth.blocked(addr)
	if !blocked {
		return true
	}
	infoOf(r).reason = "auth:too_many_failures"
	if h.opts.Metrics != nil {
		h.opts.Metrics.RateLimited()
	}
	w.Header().Set("Retry-After", retryAfter(wait))
	httpError(w, http.StatusTooManyRequests, fmt.Sprintf("too many failed authentication attempts from this address: retry after %ss", retryAfter(wait)))
	return false
}

// Only protocol version 2025-03-26 has JSON-RPC batching: 2024-11-05 never
// had it and 2025-06-18 removed it.
const batchVersion = "2025-03-26"

// batchAllowed refuses a JSON-RPC batch (a body that is a JSON array) unless
// the protocol version in force has batching: the session's negotiated
// version, else the Mcp-Protocol-Version header, else 2025-03-26 (what the
// spec says a server assumes without the header). The SDK checks only the
// header, so a client that omits it on a 2025-06-18 session got batches.
func (h *HTTP) batchAllowed(w http.ResponseWriter, r *http.Request) bool {
	br := bufio.NewReaderSize(r.Body, 512)
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	if !isBatch(br) {
		return true
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		for ss := range h.opts.Server.Sessions() {
			if ss.ID() == sid {
				if p := ss.InitializeParams(); p != nil && p.ProtocolVersion != "" {
					version = p.ProtocolVersion
				}
				break
			}
		}
	}
	if version == "" || version == batchVersion {
		return true
	}
	infoOf(r).reason = "batch_unsupported"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{
			"code":    jsonrpc.CodeInvalidRequest,
			"message": fmt.Sprintf("JSON-RPC batching is not part of protocol version %s (only %s has it): send one message per request", version, batchVersion),
		},
	})
	return false
}

// isBatch peeks at the first non-blank byte of the body without consuming it.
func isBatch(br *bufio.Reader) bool {
	for n := 1; n <= br.Size(); n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return false
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n':
			if err != nil {
				return false
			}
			continue
		default:
			return c == '['
		}
	}
	return false
}
