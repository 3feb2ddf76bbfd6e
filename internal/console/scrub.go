package console

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/agent-tools/agent-tools/internal/redact"
)

// scrubWriter passes every console answer through the runtime's redactor,
// as the MCP middleware does for MCP answers: tool descriptions and schemas,
// provider errors, call results and the audit stream may all quote a
// secret. An ordinary answer is buffered and scrubbed whole (a secret is
// never split between two writes), then sent with its Content-Length
// corrected; a text/event-stream answer is scrubbed write by write (each
// write is one whole event) and flushed as the handler asks.
type scrubWriter struct {
	w      http.ResponseWriter
	set    *redact.Set
	status int
	stream bool
	buf    bytes.Buffer
}

func (s *scrubWriter) Header() http.Header { return s.w.Header() }

func (s *scrubWriter) WriteHeader(code int) {
	if s.status != 0 {
		return
	}
	s.status = code
	if loc := s.w.Header().Get("Location"); loc != "" {
		s.w.Header().Set("Location", s.set.String(loc))
	}
	if strings.HasPrefix(s.w.Header().Get("Content-Type"), "text/event-stream") {
		s.stream = true
		s.w.WriteHeader(code)
	}
}

func (s *scrubWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.WriteHeader(http.StatusOK)
	}
	if !s.stream {
		return s.buf.Write(p)
	}
	if _, err := s.w.Write(s.set.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// FlushError is what http.ResponseController.Flush calls: a stream is
// flushed; a buffered answer is sent whole by finish.
func (s *scrubWriter) FlushError() error {
	if !s.stream {
		return nil
	}
	return http.NewResponseController(s.w).Flush()
}

// Unwrap lets http.ResponseController reach the connection's other
// controls (deadlines).
func (s *scrubWriter) Unwrap() http.ResponseWriter { return s.w }

// finish sends a buffered answer, scrubbed.
func (s *scrubWriter) finish() {
	if s.stream {
		return
	}
	if s.status == 0 {
		s.status = http.StatusOK
	}
	body := s.set.Bytes(s.buf.Bytes())
	if s.w.Header().Get("Content-Length") != "" {
		s.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	s.w.WriteHeader(s.status)
	if len(body) > 0 {
		_, _ = s.w.Write(body)
	}
}
