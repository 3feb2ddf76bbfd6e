package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// procSpec is what a stdio upstream runs.
type procSpec struct {
	command string
	args    []string
	dir     string
	env     []string
}

// minimalEnv is the child's environment (proc.MinimalEnv: PATH, HOME,
// locale, TMPDIR and TZ from the host, plus the config's env).
func minimalEnv(host []string, extra map[string]string) []string { return proc.MinimalEnv(host, extra) }

// lookPath resolves a command without a slash in the child's PATH (not
// ours); absolute entries only, so "." never counts.
func lookPath(s procSpec) (string, error) {
	if s.command == "" {
		return "", errors.New("empty command")
	}
	if strings.Contains(s.command, "/") {
		return s.command, nil // relative to dir when relative, as exec does
	}
	pathEnv := ""
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, s.command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in PATH %q", s.command, pathEnv)
}

// dialStdio starts the child and runs the MCP handshake over its stdio.
func (p *Provider) dialStdio(ctx context.Context, client *sdk.Client, s *session) error {
	environ := p.opts.Environ
	if environ == nil {
		environ = os.Environ
	}
	// The marker lets the runtime find, at exit, what the upstream detached (proc.SweepAll).
	env := append(minimalEnv(environ(), p.opts.Env), proc.TrackEnv("mcp"))
	spec := procSpec{command: p.opts.Command, args: p.opts.Args, dir: p.opts.Dir, env: env}
	pr, err := startProcess(spec)
	if err != nil {
		return fmt.Errorf("starting %s: %w", p.opts.Command, err)
	}
	pending := newPendingCalls()
	t := &stdioTransport{conn: &stdioConn{
		in:      newLineFilter(pr.stdout, p.opts.MaxMessageBytes, pending, p.problem),
		out:     pr.stdin,
		pending: pending,
		notes:   s.notes,
		capture: s.capture,
	}}
	cs, err := client.Connect(ctx, t, s.copts)
	if err != nil {
		if ctx.Err() == nil && pr.waitFor(200*time.Millisecond) {
			err = fmt.Errorf("the upstream exited during start-up (%s)", pr.describe())
		} else if tail := pr.stderr.lastLines(400); tail != "" {
			err = fmt.Errorf("%w; stderr: %s", err, tail)
		}
		pr.stop(0)
		return err
	}
	s.cs, s.proc, s.transport = cs, pr, "stdio"
	s.ctx, s.cancel = context.WithCancelCause(p.base)
	return nil
}

// wait blocks until the session ends and says why.
func (s *session) wait() error {
	connDone := make(chan struct{})
	go func() {
		_ = s.cs.Wait()
		close(connDone)
	}()
	var exited <-chan struct{}
	if s.proc != nil {
		exited = s.proc.exited
	}
	select {
	case <-s.ctx.Done():
		return context.Cause(s.ctx)
	case <-exited:
		return fmt.Errorf("the process ended (%s)", s.proc.describe())
	case <-connDone:
	}
	if s.proc == nil {
		return errors.New("the connection closed")
	}
	if s.proc.waitFor(200 * time.Millisecond) {
		return fmt.Errorf("the process ended (%s)", s.proc.describe())
	}
	return errors.New("the upstream closed its output")
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// drain copies r into the buffer until EOF or error.
func (t *tailBuffer) drain(r io.Reader) {
	_, _ = io.Copy(t, r)
}

// lastLines returns at most n bytes of the end, on one line, valid UTF-8.
func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	b := t.buf
	if len(b) > n {
		b = b[len(b)-n:]
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	t.mu.Unlock()
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
	return strings.TrimSuffix(strings.TrimSpace(s), " |")
}
