// Package redistest starts a real redis-server (the Debian package) on a
// free loopback port for tests, and stops it when the test ends.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	URL  string
	Port int
	cmd  *exec.Cmd
	t    testing.TB
}

// Start runs redis-server without persistence on 127.0.0.1. The test is
// skipped, saying why, when the binary is not installed (.ci/run installs it).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (apt-get install redis-server): " + err.Error())
	}
	s := &Server{t: t}
	s.Port = freePort(t)
	s.URL = fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port)
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.Contains(sc.Text(), "Ready to accept connections") {
				close(ready)
				signalled = true
			}
		}
		if !signalled {
			close(ready)
		}
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		s.t.Fatal("redis-server did not start")
	}
}

// Stop kills the server (a no-op when it is not running).
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
	s.cmd = nil
}

// Restart starts the server again on the same port (after Stop).
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	bin, _ := exec.LookPath("redis-server")
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.t.TempDir())
	s.start()
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
