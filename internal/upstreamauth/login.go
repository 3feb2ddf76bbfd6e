package upstreamauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agent-tools/agent-tools/internal/redact"
)

// Loopback is the redirect target of a person's login: a listener on
// 127.0.0.1 (RFC 8252 §7.3) that takes one callback.
type Loopback struct {
	URL string // the redirect URL to register and send
	ln  net.Listener
	srv *http.Server
	got chan *auth.AuthorizationResult
}

// NewLoopback listens on 127.0.0.1:port (0 = any free port).
func NewLoopback(port int) (*Loopback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("login: the callback listener: %w", err)
	}
	l := &Loopback{ln: ln, got: make(chan *auth.AuthorizationResult, 1),
		URL: fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "<p>Login failed: %s. You can close this window.</p>", html.EscapeString(e+" "+q.Get("error_description")))
		} else {
			fmt.Fprint(w, "<p>Logged in. You can close this window.</p>")
		}
		redact.Add("upstream authorization code", q.Get("code"))
		select {
		case l.got <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}:
		default: // a second callback: the first one counts
		}
	})
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = l.srv.Serve(ln) }() // ends with ErrServerClosed when the login is done
	return l, nil
}

// Close stops the listener.
func (l *Loopback) Close() error { return l.srv.Close() }

// Login is a LoginFunc: it prints the URL to out, opens a browser when
// browse is set, and waits for the callback (bounded by ctx).
func (l *Loopback) Login(out io.Writer, browse bool) LoginFunc {
	return func(ctx context.Context, authURL string) (*auth.AuthorizationResult, error) {
		fmt.Fprintf(out, "Open this URL to log in:\n\n  %s\n\n", authURL)
		if browse {
			openBrowser(authURL)
		}
		select {
		case r := <-l.got:
			if r.Code == "" {
				return nil, errors.New("the authorization server answered without a code")
			}
			return r, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the browser: %w", ctx.Err())
		}
	}
}

func openBrowser(u string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		if _, err := exec.LookPath("xdg-open"); err != nil {
			return // no browser: the printed URL is the way
		}
		cmd = exec.Command("xdg-open", u)
	}
	if cmd.Start() == nil {
		go func() { _ = cmd.Wait() }() // reaps the browser opener; its status says nothing about the login
	}
}

// Headless is a LoginFunc for authorization servers that redirect at once
// (the MCP conformance suite's, test servers): it requests the
// authorization URL without following the redirect and reads the answer
// from its Location.
func Headless(hc *http.Client) LoginFunc {
	return func(ctx context.Context, authURL string) (*auth.AuthorizationResult, error) {
		c := *hc
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		drain(resp.Body)
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || loc.String() == "" {
			return nil, fmt.Errorf("the authorization endpoint did not redirect (HTTP %d)", resp.StatusCode)
		}
		q := loc.Query()
		redact.Add("upstream authorization code", q.Get("code"))
		if e := q.Get("error"); e != "" {
			return nil, fmt.Errorf("the authorization server refused: %s", e)
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}
