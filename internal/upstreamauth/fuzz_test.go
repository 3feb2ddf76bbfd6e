package upstreamauth

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzStoreFile: a damaged or hostile token file is an error, never a
// panic or an entry under another provider's name.
func FuzzStoreFile(f *testing.F) {
	f.Add([]byte(`{"version":1,"entries":{"gh":"AAAA"}}`))
	f.Add([]byte(`{"entries":null}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		s, _ := NewFileStore(dir)
		if err := s.Save(&Entry{Provider: "seed", Resource: "https://x"}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, storeFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		if e, err := s.Load("gh"); err == nil && e != nil && e.Provider != "gh" {
			t.Fatalf("entry for gh names %q", e.Provider)
		}
		_, _ = s.List() // a malformed store is an error here, never a panic
	})
}

// FuzzParseKey: any PEM input is a key or an error.
func FuzzParseKey(f *testing.F) {
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIB\n-----END PRIVATE KEY-----\n"), "")
	f.Add([]byte("-----BEGIN EC PRIVATE KEY-----\nAA==\n-----END EC PRIVATE KEY-----\n"), "ES256")
	f.Fuzz(func(t *testing.T, data []byte, alg string) {
		k, a, err := parseKey(data, alg)
		if err == nil && (k == nil || a == "") {
			t.Fatal("no key and no error")
		}
	})
}
