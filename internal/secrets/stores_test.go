package secrets_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/tests/secretstest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	secretstest.Stop()
	os.Exit(code)
}

func newResolver(t *testing.T) (*secrets.Resolver, *redact.Set) {
	set := redact.New()
	r := secrets.NewResolver()
	r.Dir = t.TempDir()
	r.Redact = set.Add
	return r, set
}

func mustRef(t *testing.T, s string) secrets.Ref {
	t.Helper()
	r, err := secrets.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// resolves checks a reference gives want and that the value is then
// scrubbed by the reference's own name.
func resolves(t *testing.T, r *secrets.Resolver, set *redact.Set, ref, want string) {
	t.Helper()
	v, err := r.Resolve(context.Background(), mustRef(t, ref))
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	if v != want {
		t.Fatalf("%s = %q, want %q", ref, v, want)
	}
	// "[redacted: keyring:svc/acct]": the reference's text without its ${},
	// never anything that reads as a reference that did not resolve (a
	// value two references give keeps the first one's name).
	marker := "[redacted: " + strings.TrimSuffix(strings.TrimPrefix(ref, "${"), "}") + "]"
	store, _, _ := strings.Cut(marker, ":")
	if got := set.String("x " + v + " y"); !strings.HasPrefix(got, "x "+store+":") || !strings.HasSuffix(got, "] y") || strings.Contains(got, "${") || strings.Contains(got, v) {
		t.Errorf("redactor shows %q, want %q in place of the value", got, marker)
	}
}

func fails(t *testing.T, r *secrets.Resolver, ref string, words ...string) {
	t.Helper()
	v, err := r.Resolve(context.Background(), mustRef(t, ref))
	if err == nil {
		t.Fatalf("%s resolved to %d bytes; want an error", ref, len(v))
	}
	if v != "" {
		t.Errorf("a failure returned a value")
	}
	if !strings.HasPrefix(err.Error(), ref+": ") {
		t.Errorf("error %q does not start with the reference", err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

func TestFile(t *testing.T) {
	r, set := newResolver(t)
	if err := os.WriteFile(filepath.Join(r.Dir, "tok"), []byte("file-canary-Q7x2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "crlf"), []byte("crlf-value-1\r\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "empty"), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	resolves(t, r, set, "${file:tok}", "file-canary-Q7x2")
	resolves(t, r, set, "${file:"+filepath.Join(r.Dir, "tok")+"}", "file-canary-Q7x2")
	resolves(t, r, set, "${file:crlf}", "crlf-value-1\r\n") // only one newline is trimmed
	fails(t, r, "${file:missing}", "file store: cannot read", filepath.Join(r.Dir, "missing"), "no such file")
	fails(t, r, "${file:empty}", "is empty")
}

func TestCmd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test's command is a POSIX shell script")
	}
	r, set := newResolver(t)
	script := filepath.Join(r.Dir, "vault")
	count := filepath.Join(r.Dir, "count")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho run >> "+count+"\nif [ \"$1\" = fail ]; then echo 'permission denied for secret/gh' >&2; exit 3; fi\nprintf '%s\\n' \"cmd-canary-$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Commands = map[string][]string{"gh": {script, "Z9k4"}, "bad": {script, "fail"}, "nope": {filepath.Join(r.Dir, "absent")}}
	resolves(t, r, set, "${cmd:gh}", "cmd-canary-Z9k4")
	resolves(t, r, set, "${cmd:gh}", "cmd-canary-Z9k4") // cached: one run
	if b, _ := os.ReadFile(count); strings.Count(string(b), "run") != 1 {
		t.Errorf("the command ran %d times; the cache should answer the second use", strings.Count(string(b), "run"))
	}
	fails(t, r, "${cmd:bad}", "cmd store:", "exited with status 3", "permission denied for secret/gh", script+" fail")
	fails(t, r, "${cmd:nope}", "cmd store: cannot run")
	fails(t, r, "${cmd:gj}", `no command "gj" under secrets.commands; did you mean "gh"?`)
}

func TestCacheTTLAndInvalidate(t *testing.T) {
	r, _ := newResolver(t)
	now := time.Unix(1000, 0)
	r.Now = func() time.Time { return now }
	r.CacheFor = time.Minute
	p := filepath.Join(r.Dir, "tok")
	if err := os.WriteFile(p, []byte("first-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := mustRef(t, "${file:tok}")
	get := func() string {
		v, err := r.Resolve(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	get()
	if err := os.WriteFile(p, []byte("second-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := get(); v != "first-value" {
		t.Errorf("within cacheFor: %q", v)
	}
	now = now.Add(61 * time.Second)
	if v := get(); v != "second-value" {
		t.Errorf("after cacheFor: %q", v)
	}
	if err := os.WriteFile(p, []byte("third-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Invalidate(ref)
	if v := get(); v != "third-value" {
		t.Errorf("after Invalidate: %q", v)
	}
	r.CacheFor = 0
	now = now.Add(time.Hour)
	get()
	if err := os.WriteFile(p, []byte("fourth-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := get(); v != "fourth-value" {
		t.Errorf("cacheFor 0 must resolve at every use: %q", v)
	}
}

func writeAge(t *testing.T, path string, recipient age.Recipient, plain string) {
	t.Helper()
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, recipient)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(w, plain)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAge(t *testing.T) {
	r, set := newResolver(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := age.GenerateX25519Identity()
	idFile := filepath.Join(r.Dir, "key.txt")
	if err := os.WriteFile(idFile, []byte("# created: test\n"+id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Env = append(os.Environ(), "AGE_IDENTITY_FILE="+idFile)
	writeAge(t, filepath.Join(r.Dir, "secrets.enc.yaml"), id.Recipient(), "github:\n  token: age-yaml-canary-P3\ndb: {port: 5432}\n")
	writeAge(t, filepath.Join(r.Dir, "secrets.json.age"), id.Recipient(), `{"api": {"key": "age-json-canary-W8"}, "n": null}`)
	writeAge(t, filepath.Join(r.Dir, "prod.env.age"), id.Recipient(), "# comment\nexport API_TOKEN=\"age-env-canary-K5\"\nOTHER=x\n")
	writeAge(t, filepath.Join(r.Dir, "notmine.yaml"), other.Recipient(), "a: b\n")
	resolves(t, r, set, "${age:secrets.enc.yaml#github.token}", "age-yaml-canary-P3")
	resolves(t, r, set, "${age:secrets.json.age#api.key}", "age-json-canary-W8")
	resolves(t, r, set, "${age:prod.env.age#API_TOKEN}", "age-env-canary-K5")
	fails(t, r, "${age:secrets.enc.yaml#github.tokn}", `has no github.tokn`, `no key "tokn" (keys there: token)`)
	fails(t, r, "${age:secrets.enc.yaml#db}", "a mapping or a list")
	fails(t, r, "${age:secrets.json.age#n}", "null")
	fails(t, r, "${age:notmine.yaml#a}", "cannot decrypt", "notmine.yaml", idFile)
	fails(t, r, "${age:absent.yaml#a}", "cannot read", "absent.yaml")
	r.Env = append(os.Environ(), "AGE_IDENTITY_FILE="+filepath.Join(r.Dir, "nokey"))
	r.Invalidate(mustRef(t, "${age:secrets.json.age#api.key}"))
	fails(t, r, "${age:secrets.json.age#api.key}", "cannot read the identity file", "AGE_IDENTITY_FILE")
}

func TestAgeIdentityFromKeyring(t *testing.T) {
	secretstest.Keyring(t)
	r, set := newResolver(t)
	r.Env = []string{"PATH=" + os.Getenv("PATH")} // no AGE_IDENTITY_FILE
	id, _ := age.GenerateX25519Identity()
	if err := secrets.OS().Set(secrets.AgeKeyringService, secrets.AgeKeyringAccount, id.String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secrets.OS().Delete(secrets.AgeKeyringService, secrets.AgeKeyringAccount) })
	writeAge(t, filepath.Join(r.Dir, "s.json"), id.Recipient(), `{"k": "age-kr-canary-D4"}`)
	resolves(t, r, set, "${age:s.json#k}", "age-kr-canary-D4")
}

func TestKeyring(t *testing.T) {
	secretstest.Keyring(t)
	if err := secrets.KeyringAvailable(); err != nil {
		t.Fatal(err)
	}
	r, set := newResolver(t)
	if err := secrets.OS().Set("agent-tools-test/gh", "ci@example.com", "keyring-canary-M6"); err != nil {
		t.Fatal(err)
	}
	resolves(t, r, set, "${keyring:agent-tools-test/gh/ci@example.com}", "keyring-canary-M6")
	fails(t, r, "${keyring:agent-tools-test/none}", `no item for service "agent-tools-test" account "none"`, "agent-tools secrets set agent-tools-test/none")
	// A rotated item is read after Invalidate (the 401 path).
	if err := secrets.OS().Set("agent-tools-test/gh", "ci@example.com", "keyring-canary-M7"); err != nil {
		t.Fatal(err)
	}
	ref := mustRef(t, "${keyring:agent-tools-test/gh/ci@example.com}")
	r.Invalidate(ref)
	if v, _ := r.Resolve(context.Background(), ref); v != "keyring-canary-M7" {
		t.Errorf("after rotation: %q", v)
	}
}

func TestPass(t *testing.T) {
	insert := secretstest.Pass(t)
	insert("team/github", "pass-canary-R2\nurl: https://github.com\n")
	r, set := newResolver(t)
	r.Env = nil                                                  // the runtime's environment: GNUPGHOME, PASSWORD_STORE_DIR
	resolves(t, r, set, "${pass:team/github}", "pass-canary-R2") // the first line only
	fails(t, r, "${pass:team/gitlab}", "pass store:", `"pass show team/gitlab" exited with status 1`, "is not in the password store")
}

func TestNotFoundIsNeverEmpty(t *testing.T) {
	r, _ := newResolver(t)
	out, err := r.Expand(context.Background(), "Bearer ${file:nothere}")
	if err == nil || out != "" {
		t.Fatalf("Expand = %q, %v; want an error and no text", out, err)
	}
	var se *secrets.Error
	if !errors.As(err, &se) || se.Ref.Store != "file" {
		t.Errorf("want a *secrets.Error naming the store: %v", err)
	}
}

// TestTransportRefreshOn401: an upstream that rotated its token answers 401
// to the old one; the transport resolves again and retries once with the new.
func TestTransportRefreshOn401(t *testing.T) {
	r, _ := newResolver(t)
	r.CacheFor = time.Hour
	p := filepath.Join(r.Dir, "tok")
	if err := os.WriteFile(p, []byte("rotating-token-A1"), 0o600); err != nil {
		t.Fatal(err)
	}
	var want atomic.Value
	want.Store("Bearer rotating-token-A1")
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		seen.Add(1)
		body := make([]byte, 10)
		n, _ := req.Body.Read(body)
		if req.Header.Get("Authorization") != want.Load().(string) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, "ok %s", body[:n])
	}))
	defer srv.Close()
	hdr, err := r.Expand(context.Background(), "Bearer ${file:tok}")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &secrets.Transport{Base: srv.Client().Transport}}
	do := func() (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("payload"))
		req.Header.Set("Authorization", hdr) // the config's value, resolved once
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	if code, body := do(); code != 200 || body != "ok payload" {
		t.Fatalf("first call: %d %q", code, body)
	}
	if err := os.WriteFile(p, []byte("rotating-token-B2"), 0o600); err != nil {
		t.Fatal(err)
	}
	want.Store("Bearer rotating-token-B2")
	seen.Store(0)
	if code, body := do(); code != 200 || body != "ok payload" {
		t.Fatalf("after rotation: %d %q; want the retry with the new token to succeed", code, body)
	}
	if seen.Load() != 2 {
		t.Errorf("upstream saw %d requests, want 2 (the 401, then one retry)", seen.Load())
	}
	// A wrong credential that does not change is answered 401 once, not looped.
	want.Store("Bearer something-else")
	seen.Store(0)
	if code, _ := do(); code != 401 || seen.Load() != 1 {
		t.Errorf("unchanged credential: %d after %d requests; want 401 after 1", code, seen.Load())
	}
}
