package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/authtest"
)

// TestAuthLoginStatusLogout: `auth login` runs the flow through its
// loopback callback (the test plays the browser), `auth status` shows
// provider, issuer, scopes and expiry but no token, `auth logout` forgets.
func TestAuthLoginStatusLogout(t *testing.T) {
	f := authtest.New(t)
	dir, state := t.TempDir(), t.TempDir()
	cfg := "providers:\n  - id: remote\n    kind: mcp\n    url: " + f.URL + "/mcp\n    auth: {type: oauth}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	envFor := func(stdout, stderr io.Writer) *Env {
		return &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Dir: dir,
			LookupEnv: func(k string) (string, bool) {
				switch k {
				case "XDG_STATE_HOME":
					return state, true
				case "XDG_CACHE_HOME":
					return t.TempDir(), true
				}
				return "", false
			}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	pr, pw := io.Pipe()
	browser := make(chan error, 1)
	go func() { // the person: opens the printed URL
		re := regexp.MustCompile(`https?://\S+/authorize\?\S+`)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				resp, err := http.Get(u)
				if err == nil {
					resp.Body.Close()
				}
				browser <- err
				// Drain the rest so the login never blocks on its stderr; the
				// pipe ends with EOF once it returns, and the lines are unread.
				_, _ = io.Copy(io.Discard, pr)
				return
			}
		}
		browser <- io.ErrUnexpectedEOF
	}()
	var out bytes.Buffer
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the tool-list cache the login writes
	t.Setenv("XDG_STATE_HOME", state)       // the provider's own store lookup (serve's path) agrees
	code := Run(ctx, envFor(&out, pw), []string{"auth", "login", "remote", "--no-browser"})
	pw.Close()
	if err := <-browser; err != nil {
		t.Fatalf("browser: %v", err)
	}
	if code != ExitOK || !strings.Contains(out.String(), "Logged in to remote") {
		t.Fatalf("login: exit %d\n%s", code, out.String())
	}
	t.Logf("%s", out.String())

	out.Reset()
	var errb bytes.Buffer
	if code := Run(ctx, envFor(&out, &errb), []string{"auth", "status"}); code != ExitOK {
		t.Fatalf("status: %d %s", code, errb.String())
	}
	if s := out.String(); !strings.Contains(s, "remote: issuer "+f.URL) || !strings.Contains(s, "scopes tools") || strings.Contains(s, "canary") {
		t.Errorf("status:\n%s", s)
	}
	out.Reset()
	if code := Run(ctx, envFor(&out, &errb), []string{"auth", "status", "--json"}); code != ExitOK || strings.Contains(out.String(), "canary") {
		t.Errorf("status --json: %d\n%s", code, out.String())
	}
	raw, _ := os.ReadFile(filepath.Join(state, "agent-tools", "upstream-tokens.json"))
	if len(raw) == 0 || bytes.Contains(raw, []byte("canary")) {
		t.Errorf("token file empty or readable: %d bytes", len(raw))
	}
	out.Reset()
	if code := Run(ctx, envFor(&out, &errb), []string{"auth", "logout", "remote"}); code != ExitOK {
		t.Fatalf("logout: %d", code)
	}
	out.Reset()
	Run(ctx, envFor(&out, &errb), []string{"auth", "status"})
	if !strings.Contains(out.String(), "no upstream logins") {
		t.Errorf("after logout: %s", out.String())
	}
}

// authEnv is an Env over dir with its own state and cache directories.
func authEnv(t *testing.T, dir string, stdout, stderr io.Writer) *Env {
	state, cache := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CACHE_HOME", cache)
	return &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Dir: dir,
		LookupEnv: func(k string) (string, bool) {
			switch k {
			case "XDG_STATE_HOME":
				return state, true
			case "XDG_CACHE_HOME":
				return cache, true
			}
			return "", false
		}}
}

func writeConfig(t *testing.T, yaml string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A login that cannot work until the config changes (an authorization
// server with neither dynamic registration nor Client ID Metadata
// Documents) says what to change, not to run the same command again.
func TestAuthLoginNoRegistration(t *testing.T) {
	f := authtest.New(t)
	f.NoRegister = true
	dir := writeConfig(t, "providers:\n  - id: remote\n    kind: mcp\n    url: "+f.URL+"/mcp\n    auth: {type: oauth}\n")
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if code := Run(ctx, authEnv(t, dir, &out, &errb), []string{"auth", "login", "remote", "--no-browser"}); code != ExitFailed {
		t.Fatalf("exit %d, want 1\n%s", code, errb.String())
	}
	msg := errb.String()
	t.Logf("%s", msg)
	for _, want := range []string{
		"the authorization server " + f.URL + " offers no dynamic client registration (its metadata has no registration_endpoint)",
		"nor Client ID Metadata Documents",
		`configure it on provider "remote": auth: {type: oauth, clientId: <id>`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "run: agent-tools auth login") {
		t.Errorf("stderr tells to log in again:\n%s", msg)
	}
	if f.AuthRequests.Load() != 0 {
		t.Error("the browser was sent to authorize")
	}
}

// An auth block whose server never asks for a login: auth login has
// nothing to store, and doctor notes the unused block.
func TestDoctorUnusedAuth(t *testing.T) {
	f := authtest.New(t)
	f.Open = true
	dir := writeConfig(t, "local: {enabled: false}\nproviders:\n  - id: open\n    kind: mcp\n    url: "+f.URL+"/mcp\n    auth: {type: oauth}\n")
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := authEnv(t, dir, &out, &errb)
	if code := Run(ctx, env, []string{"auth", "login", "open", "--no-browser"}); code != ExitOK || !strings.Contains(errb.String(), "without asking for a login; nothing stored") {
		t.Fatalf("login: exit %d\n%s", code, errb.String())
	}
	out.Reset()
	if code := Run(ctx, env, []string{"doctor"}); code != ExitOK {
		t.Fatalf("doctor: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !regexp.MustCompile(`(?m)^open +auth +warning +auth: \{type: oauth\} is unused: the server serves its tools without asking for a login`).MatchString(out.String()) {
		t.Errorf("doctor does not note the unused auth block:\n%s", out.String())
	}
}
