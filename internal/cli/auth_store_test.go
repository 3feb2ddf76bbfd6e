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

// login runs `auth login remote` against a real OAuth server with the
// token store under state, the test playing the browser.
func login(t *testing.T, state string) (code int, stdout, stderr string) {
	t.Helper()
	f := authtest.New(t)
	dir := t.TempDir()
	cfg := "providers:\n  - id: remote\n    kind: mcp\n    url: " + f.URL + "/mcp\n    auth: {type: oauth}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("XDG_STATE_HOME", state)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	browser := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		re := regexp.MustCompile(`https?://\S+/authorize\?\S+`)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			errb.WriteString(sc.Text() + "\n")
			if u := re.FindString(sc.Text()); u != "" {
				resp, err := http.Get(u)
				if err == nil {
					resp.Body.Close()
				}
				browser <- err
				for sc.Scan() {
					errb.WriteString(sc.Text() + "\n")
				}
				return
			}
		}
		browser <- io.ErrUnexpectedEOF
	}()
	var out bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: pw, Dir: dir,
		LookupEnv: func(k string) (string, bool) {
			switch k {
			case "XDG_STATE_HOME":
				return state, true
			case "XDG_CACHE_HOME":
				return cache, true
			}
			return "", false
		}}
	code = Run(ctx, env, []string{"auth", "login", "remote", "--no-browser"})
	pw.Close()
	err := <-browser
	<-done // stderr is read to its end
	if err != nil {
		t.Fatalf("browser: %v\n%s", err, errb.String())
	}
	return code, out.String(), errb.String()
}

// A damaged upstream-tokens.json used to make auth login run the whole
// flow, throw the tokens away and exit 0. Now it is moved aside with a
// warning and the new login is kept.
func TestAuthLoginOverDamagedStore(t *testing.T) {
	state := t.TempDir()
	store := filepath.Join(state, "agent-tools")
	if err := os.MkdirAll(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "upstream-tokens.json"), []byte(`{"version":1,"entries":`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := login(t, state)
	if code != ExitOK || !strings.Contains(out, "Logged in to remote") {
		t.Fatalf("login over a damaged store: exit %d\n%s\n%s", code, out, errs)
	}
	if aside, _ := filepath.Glob(filepath.Join(store, "upstream-tokens.json.damaged-*")); len(aside) != 1 {
		t.Errorf("the damaged file was not moved aside: %v", aside)
	}
	var sout, serr bytes.Buffer
	Run(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &sout, Stderr: &serr, Dir: t.TempDir(),
		LookupEnv: func(k string) (string, bool) {
			if k == "XDG_STATE_HOME" {
				return state, true
			}
			return "", false
		}}, []string{"auth", "status"})
	if !strings.Contains(sout.String(), "remote: issuer") {
		t.Errorf("the login was not kept: %s %s", sout.String(), serr.String())
	}
}

// A token store that cannot be written makes auth login fail (exit 1) with
// the path and the remedy, never "nothing stored" and exit 0.
func TestAuthLoginUnwritableStore(t *testing.T) {
	state := t.TempDir()
	// A file where the store's directory should be: no write can succeed.
	if err := os.WriteFile(filepath.Join(state, "agent-tools"), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := login(t, state)
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFailed, out, errs)
	}
	for _, w := range []string{"login to remote succeeded, but its tokens could not be saved", filepath.Join(state, "agent-tools"), "log in again"} {
		if !strings.Contains(errs, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errs)
		}
	}
	if strings.Contains(errs+out, "nothing stored") {
		t.Errorf("said nothing stored:\n%s", errs)
	}
}
