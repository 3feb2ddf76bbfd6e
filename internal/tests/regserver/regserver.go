// Package regserver runs the official MCP registry server
// (github.com/modelcontextprotocol/registry, cmd/registry) for tests: built
// once per test binary from the Go module cache at a pinned version, on a
// throwaway PostgreSQL cluster, seeded with real server.json entries.
//
// Prepare a machine with `go run ./internal/tests/regserver/prepare`
// (.ci/run does): it downloads the module and its dependencies, so that the
// tests build offline (GOPROXY=off) and reach nothing beyond 127.0.0.1.
package regserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Module and Version are the registry server that is built: the version
// whose docs/reference/api/openapi.yaml internal/mcpregistry follows.
const (
	Module  = "github.com/modelcontextprotocol/registry"
	Version = "v1.8.9"
)

// Fallbacks are dependency versions used when the pinned ones are not
// available from the module proxy (huma v2.40.0 is refused by
// proxy.golang.org: "This module version is not available"). The build
// says when it used them.
var Fallbacks = map[string]string{"github.com/danielgtaylor/huma/v2": "v2.37.2"}

var (
	buildOnce sync.Once
	binPath   string
	buildNote string
	buildErr  error
)

// Build returns the registry server's binary, built once per process
// (GOPROXY=off unless online; the Go build cache keeps later builds to a
// link). note says whether the fallbacks were needed.
func Build(online bool) (bin, note string, err error) {
	buildOnce.Do(func() { binPath, buildNote, buildErr = build(online) })
	return binPath, buildNote, buildErr
}

func goEnv(key string) (string, error) {
	out, err := exec.Command("go", "env", key).Output()
	return strings.TrimSpace(string(out)), err
}

func build(online bool) (string, string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", "", errors.New("no go command on PATH")
	}
	cache, err := goEnv("GOMODCACHE")
	if err != nil || cache == "" {
		return "", "", fmt.Errorf("go env GOMODCACHE: %v", err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	if !online {
		env = append(env, "GOPROXY=off")
	}
	dir := filepath.Join(cache, Module+"@"+Version)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		if !online {
			return "", "", fmt.Errorf("%s@%s is not in the module cache: run `go run ./internal/tests/regserver/prepare`", Module, Version)
		}
		cmd := exec.Command("go", "mod", "download", Module+"@"+Version)
		cmd.Dir, cmd.Env = os.TempDir(), env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go mod download: %v: %s", err, out)
		}
	}
	out, err := os.MkdirTemp("", "regserver-")
	if err != nil {
		return "", "", err
	}
	bin := filepath.Join(out, "registry")
	try := func(replace map[string]string) ([]byte, error) {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		sum, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
		for path, v := range replace {
			mod = append(mod, fmt.Sprintf("\nreplace %s => %s %s\n", path, path, v)...)
		}
		if err := os.WriteFile(filepath.Join(out, "go.mod"), mod, 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(out, "go.sum"), sum, 0o644); err != nil {
			return nil, err
		}
		cmd := exec.Command("go", "build", "-modfile="+filepath.Join(out, "go.mod"), "-trimpath", "-o", bin, "./cmd/registry")
		cmd.Dir, cmd.Env = dir, env
		return cmd.CombinedOutput()
	}
	msg, err := try(nil)
	if err == nil {
		return bin, "", nil
	}
	if _, err2 := try(Fallbacks); err2 == nil {
		return bin, fmt.Sprintf("built with %v (the pinned versions were not available: %s)", Fallbacks, firstLine(msg)), nil
	}
	return "", "", fmt.Errorf("go build %s@%s: %v: %s", Module, Version, err, tail(msg))
}

func firstLine(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "error") || strings.Contains(l, ": ") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(string(b))
}

func tail(b []byte) string {
	if len(b) > 1500 {
		b = b[len(b)-1500:]
	}
	return string(b)
}

// Server is a running registry.
type Server struct {
	URL string
	// Log is the server's output so far (for failures).
	Log  func() string
	stop func()
}

// Stop stops the server and the database.
func (s *Server) Stop() { s.stop() }

// SeedFile is the registry module's own seed (data/seed.json), as entries.
func SeedFile() ([]json.RawMessage, error) {
	cache, err := goEnv("GOMODCACHE")
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(cache, Module+"@"+Version, "data", "seed.json"))
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	return out, json.Unmarshal(data, &out)
}

// Unavailable says why the server cannot run here ("" when it can):
// PostgreSQL's initdb and pg_ctl, and an unprivileged user to run them
// as when the tests run as root.
func Unavailable() string {
	if runtime.GOOS == "windows" {
		return "the registry tests run PostgreSQL the Unix way"
	}
	if _, err := pgBin("initdb"); err != nil {
		return "PostgreSQL is not installed (apt-get install postgresql; .ci/run does)"
	}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			return "running as root without setpriv to start PostgreSQL as another user"
		}
		if _, err := user.Lookup("postgres"); err != nil {
			if _, err := user.Lookup("nobody"); err != nil {
				return "running as root with no postgres or nobody user to start PostgreSQL as"
			}
		}
	}
	return ""
}

func pgBin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("%s not found", name)
}

// asUser runs a PostgreSQL program, as an unprivileged user when root.
func asUser(uid, gid int, name string, args ...string) *exec.Cmd {
	if uid < 0 {
		return exec.Command(name, args...)
	}
	// --pdeathsig: the kernel clears the parent-death signal when the
	// user changes; setpriv sets it again after.
	return exec.Command("setpriv", append([]string{"--pdeathsig", "KILL", "--reuid=" + strconv.Itoa(uid), "--regid=" + strconv.Itoa(gid), "--clear-groups", "--", name}, args...)...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts PostgreSQL in a new directory under dir and the registry
// server on it, seeded with entries (server.json documents).
func Start(ctx context.Context, dir string, entries []json.RawMessage) (*Server, error) {
	if why := Unavailable(); why != "" {
		return nil, errors.New(why)
	}
	bin, _, err := Build(false)
	if err != nil {
		return nil, err
	}
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			u, err = user.Lookup("nobody")
		}
		if err != nil {
			return nil, err
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	pg := filepath.Join(dir, "pg")
	if err := os.MkdirAll(pg, 0o700); err != nil {
		return nil, err
	}
	if uid >= 0 {
		// The other user must reach its directory: dir may be a 0700
		// temporary directory of root's.
		if err := os.Chmod(dir, 0o711); err != nil {
			return nil, err
		}
		if err := os.Chown(pg, uid, gid); err != nil {
			return nil, err
		}
	}
	initdb, _ := pgBin("initdb")
	postgres, err := pgBin("postgres")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(pg, "data")
	if out, err := asUser(uid, gid, initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--no-instructions").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, tail(out))
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// PostgreSQL runs in the foreground as a child that dies with the test
	// binary (Linux: the parent-death signal), so a crashed test leaves no
	// server behind on a shared machine; it is ready when it says so.
	pgCmd := asUser(uid, gid, postgres, "-D", data, "-p", strconv.Itoa(port), "-k", pg,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	dieWithParent(pgCmd)
	pgLog := &syncBuffer{}
	pgReady, pgExited, err := startLogged(pgCmd, pgLog, "database system is ready to accept connections", "")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	stopPG := func() {
		_ = pgCmd.Process.Signal(os.Interrupt) // fast shutdown
		<-pgExited
	}
	select {
	case err = <-pgReady:
	case <-time.After(time.Minute):
		err = errors.New("not ready within a minute")
	}
	if err != nil {
		_ = pgCmd.Process.Kill()
		<-pgExited
		return nil, fmt.Errorf("postgres: %v\n%s", err, pgLog.String())
	}

	seed := filepath.Join(dir, "seed.json")
	raw, err := json.MarshalIndent(entries, "", "  ")
	if err == nil {
		err = os.WriteFile(seed, raw, 0o644)
	}
	if err != nil {
		stopPG()
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		stopPG()
		return nil, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(),
		"MCP_REGISTRY_SERVER_ADDRESS=127.0.0.1:"+strconv.Itoa(httpPort),
		fmt.Sprintf("MCP_REGISTRY_DATABASE_URL=postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		"MCP_REGISTRY_DATABASE_MIN_CONNECTIONS=1", "MCP_REGISTRY_DATABASE_MAX_CONNECTIONS=8",
		"MCP_REGISTRY_SEED_FROM="+seed,
		// The seed is ours and offline: the registry's publish-time checks
		// (package ownership on npm, PyPI, ...) would need the network.
		"MCP_REGISTRY_ENABLE_REGISTRY_VALIDATION=false",
		"MCP_REGISTRY_JWT_PRIVATE_KEY="+hex.EncodeToString(key),
		"MCP_REGISTRY_ENABLE_ANONYMOUS_AUTH=false", "MCP_REGISTRY_OIDC_ENABLED=false")
	dieWithParent(cmd)
	logBuf := &syncBuffer{}
	ready, exited, err := startLogged(cmd, logBuf, "HTTP server starting on", "Failed to import seed data")
	if err != nil {
		stopPG()
		return nil, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
		stopPG()
	}
	select {
	case err = <-ready:
	case <-time.After(2 * time.Minute):
		err = errors.New("the registry did not start within 2 minutes")
	}
	if err != nil {
		stop()
		return nil, fmt.Errorf("%v\n%s", err, logBuf.String())
	}
	url := "http://127.0.0.1:" + strconv.Itoa(httpPort)
	// The log line comes right before the listener opens: wait for the
	// first answer (connection refused is retried, nothing else).
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url + "/v0.1/servers?limit=1")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("the registry does not answer: %v\n%s", err, logBuf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &Server{URL: url, Log: logBuf.String, stop: stop}, nil
}

// startLogged starts cmd with its output in log; ready gets nil when a
// line contains readyLine, an error when one contains failLine or the
// process ends first; exited is closed when it has ended.
func startLogged(cmd *exec.Cmd, log *syncBuffer, readyLine, failLine string) (ready chan error, exited chan struct{}, err error) {
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	ready, exited = make(chan error, 1), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = log.WriteString(line + "\n") // the server's log, for a failure's message: a short write loses only that
			switch {
			case sent:
			case strings.Contains(line, readyLine):
				ready <- nil
				sent = true
			case failLine != "" && strings.Contains(line, failLine):
				ready <- errors.New(line)
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, pr)
		if !sent {
			ready <- errors.New("exited before it was ready")
		}
	}()
	go func() { _ = cmd.Wait(); pw.Close(); close(exited) }()
	return ready, exited, nil
}

type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) WriteString(s string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.WriteString(s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.String()
}

// Cleanup removes the built binary (call it once, after the tests).
func Cleanup() {
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
}
