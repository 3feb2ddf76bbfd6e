package embedding

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/tests/embedtest"
)

func TestParseEndpoint(t *testing.T) {
	for _, c := range []struct {
		url string
		api API
		ok  bool
	}{
		{"http://127.0.0.1:11434/api/embed", Ollama, true},
		{"https://api.openai.com/v1/embeddings", OpenAI, true},
		{"http://localhost:8080/v1/embeddings/", OpenAI, true},
		{"http://127.0.0.1:11434", 0, false},
		{"http://127.0.0.1:11434/api/embeddings", OpenAI, true}, // Ollama's legacy path is not /api/embed: OpenAI-style suffix
		{"ftp://x/v1/embeddings", 0, false},
		{"/v1/embeddings", 0, false},
		{"::", 0, false},
	} {
		api, err := ParseEndpoint(c.url)
		if (err == nil) != c.ok || (c.ok && api != c.api) {
			t.Errorf("ParseEndpoint(%q) = %v, %v; want %v, ok %v", c.url, api, err, c.api, c.ok)
		}
	}
}

func TestClientBothAPIs(t *testing.T) {
	srv := embedtest.New()
	defer srv.Close()
	for _, path := range []string{"/v1/embeddings", "/api/embed"} {
		c, err := NewClient(srv.URL+path, "fake", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		vecs, err := c.Embed(context.Background(), []string{"weather forecast", "stock price"})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(vecs) != 2 || len(vecs[0]) != embedtest.Dim || !slicesEqual(vecs[1], embedtest.Vector("stock price")) {
			t.Errorf("%s: got %d vectors", path, len(vecs))
		}
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClientErrorsHideSecrets: neither the header value nor the URL's query
// reaches an error.
func TestClientErrorsHideSecrets(t *testing.T) {
	srv := embedtest.New()
	srv.Header = "Bearer right"
	defer srv.Close()
	const secret = "sk-very-secret"
	c, err := NewClient(srv.URL+"/v1/embeddings?api-key="+secret, "fake", map[string]string{"Authorization": "Bearer " + secret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), []string{"x"})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 401 {
		t.Fatalf("err = %v, want HTTP 401", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error leaks the secret: %v", err)
	}
	down, _ := NewClient("http://127.0.0.1:1/v1/embeddings?api-key="+secret, "fake", nil, nil)
	if _, err := down.Embed(context.Background(), []string{"x"}); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("unreachable endpoint: %v", err)
	}
	c2, _ := NewClient(srv.URL+"/v1/embeddings", "fake", map[string]string{"Authorization": "Bearer right"}, nil)
	if _, err := c2.Embed(context.Background(), []string{"x"}); err != nil {
		t.Errorf("with the right header: %v", err)
	}
}

func TestDecodeVectorsMalformed(t *testing.T) {
	for _, c := range []struct {
		api API
		raw string
		n   int
	}{
		{OpenAI, `{`, 1},
		{OpenAI, `{"data":[]}`, 1},
		{OpenAI, `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`, 2},
		{OpenAI, `{"data":[{"index":5,"embedding":[1]}]}`, 1},
		{OpenAI, `{"data":[{"index":0,"embedding":[]}]}`, 1},
		{OpenAI, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`, 2},
		{Ollama, `{"embeddings":[[1,2]]}`, 2},
		{Ollama, `{"embeddings":"x"}`, 1},
		{Ollama, `[]`, 1},
	} {
		if _, err := decodeVectors(c.api, []byte(c.raw), c.n); err == nil {
			t.Errorf("decodeVectors(%v, %s, %d) succeeded", c.api, c.raw, c.n)
		}
	}
	v, err := decodeVectors(OpenAI, []byte(`{"data":[{"index":1,"embedding":[2]},{"index":0,"embedding":[1]}]}`), 2)
	if err != nil || v[0][0] != 1 || v[1][0] != 2 {
		t.Errorf("out-of-order indexes: %v, %v", v, err)
	}
}

func FuzzDecodeVectors(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1,2]}]}`), 1, false)
	f.Add([]byte(`{"embeddings":[[1],[2]]}`), 2, true)
	f.Fuzz(func(t *testing.T, raw []byte, n int, ollama bool) {
		if len(raw) > 4096 || n < 0 || n > 64 {
			return
		}
		api := OpenAI
		if ollama {
			api = Ollama
		}
		vecs, err := decodeVectors(api, raw, n)
		if err == nil && len(vecs) != n {
			t.Fatalf("%d vectors for %d", len(vecs), n)
		}
	})
}

func TestCacheRoundTripAndTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.bin")
	c, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := KeyOf("m", "a"), KeyOf("m", "b")
	if KeyOf("m", "a") != k1 || KeyOf("n", "a") == k1 {
		t.Fatal("keys are not a function of model and text")
	}
	if err := c.Put(k1, []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(k2, []float32{4, 5}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// A torn record at the end (a crash mid-append) is cut off.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if _, err := f.Write(encodeRecord(KeyOf("m", "c"), []float32{7, 8, 9})[:20]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c, err = OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Get(k2); !ok || len(v) != 2 || v[1] != 5 || c.Len() != 2 {
		t.Fatalf("reloaded: %v %v, len %d", v, ok, c.Len())
	}
	if err := c.Put(KeyOf("m", "d"), []float32{1}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, _ = OpenCache(path)
	if c.Len() != 3 {
		t.Errorf("after the torn tail and one more record: %d vectors, want 3", c.Len())
	}
	c.Close()
}

func TestCacheCorrupt(t *testing.T) {
	good := append([]byte(cacheMagic), encodeRecord(KeyOf("m", "a"), []float32{1})...)
	flipped := bytes.Clone(good)
	flipped[len(flipped)-6] ^= 0xff
	for _, c := range []struct {
		name string
		data []byte
		want int
	}{
		{"empty", nil, 0},
		{"wrong magic", []byte("something else entirely\n"), 0},
		{"good", good, 1},
		{"bad crc", flipped, 0},
		{"huge dimension", append([]byte(cacheMagic), make([]byte, 32)...), 0},
	} {
		path := filepath.Join(t.TempDir(), "v.bin")
		if err := os.WriteFile(path, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		cc, err := OpenCache(path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cc.Len() != c.want {
			t.Errorf("%s: %d vectors, want %d", c.name, cc.Len(), c.want)
		}
		cc.Close()
	}
}

func FuzzReadRecords(f *testing.F) {
	f.Add(append([]byte(cacheMagic), encodeRecord(KeyOf("m", "a"), []float32{1, 2})...))
	f.Add([]byte(cacheMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		off, err := readRecords(bytes.NewReader(b), func(Key, []float32) {})
		if err != nil || off < 0 || off > int64(len(b)) {
			t.Fatalf("offset %d of %d, %v", off, len(b), err)
		}
	})
}

// catalog: the weather tool's text never says "rain", which the fake
// embedding puts near "forecast".
var catalog = map[string][]index.Doc{
	"meteo": {{ID: "meteo.forecast", Name: "city_forecast", Description: "Forecast for a city over the next days."}},
	"fs": {
		{ID: "fs.read_file", Name: "read_file", Description: "Read a file from disk."},
		{ID: "fs.write_file", Name: "write_file", Description: "Write text to a file tomorrow or today."},
	},
	"mail": {{ID: "mail.send", Name: "send_email", Description: "Send an email message."}},
}

func newIndex(t *testing.T, sem index.Semantic, cfg index.Config) *index.Index {
	t.Helper()
	ix := index.NewWithConfig(cfg)
	if sem != nil {
		ix.SetSemantic(sem)
	}
	for _, p := range []string{"meteo", "fs", "mail"} {
		ix.Replace(p, catalog[p])
	}
	return ix
}

func hitIDs(hs []index.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

// TestFusionFindsWhatLexicalMisses: with the semantic stage the weather
// tool is found for "will it rain tomorrow" (beside the lexical match on
// "tomorrow"), by both fusion methods, and says why; without it, it is not.
func TestFusionFindsWhatLexicalMisses(t *testing.T) {
	srv := embedtest.New()
	defer srv.Close()
	const q = "will it rain tomorrow"
	lex := newIndex(t, nil, index.DefaultConfig())
	if slicesContain(hitIDs(lex.Search(q, index.Options{})), "meteo.forecast") {
		t.Fatal("lexical ranking already finds the weather tool: the test proves nothing")
	}
	for _, fusion := range []string{index.FuseRRF, index.FuseBlend} {
		for _, path := range []string{"/v1/embeddings", "/api/embed"} {
			c, _ := NewClient(srv.URL+path, "fake", nil, nil)
			cfg := index.DefaultConfig()
			cfg.SemanticFusion = fusion
			w := 1.0 // set: a four-tool catalog is too small for the self-check
			if fusion == index.FuseBlend {
				w = 0.5
			}
			st := NewStore(c, Options{Model: "fake", Weight: &w, Index: cfg})
			ix := newIndex(t, st, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := st.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			cancel()
			hs := ix.Search(q, index.Options{Explain: true})
			if len(hs) < 2 || (hs[0].ID != "meteo.forecast" && hs[1].ID != "meteo.forecast") {
				t.Errorf("%s %s: hits %v, want meteo.forecast in the top 2", fusion, path, hitIDs(hs))
			}
			for _, h := range hs {
				if h.ID == "meteo.forecast" && h.Why != "similar in meaning (embeddings)" {
					t.Errorf("%s: why = %q", fusion, h.Why)
				}
			}
			// Provider and kind filters apply to the semantic stage too.
			for _, h := range ix.Search(q, index.Options{Provider: "fs"}) {
				if h.Provider != "fs" {
					t.Errorf("%s: provider filter let %s through", fusion, h.ID)
				}
			}
			if st.Status().Vectors != 4 {
				t.Errorf("status %+v", st.Status())
			}
			st.Close()
		}
	}
}

func slicesContain(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// countingHandler counts log records by level.
type countingHandler struct {
	mu    sync.Mutex
	warns []string
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Level == slog.LevelWarn {
		h.warns = append(h.warns, r.Message)
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// TestFallbackToLexical: a failing endpoint gives exactly the lexical
// ranking, is logged once, and doctor shows why.
func TestFallbackToLexical(t *testing.T) {
	srv := embedtest.New()
	defer srv.Close()
	c, _ := NewClient(srv.URL+"/v1/embeddings", "fake", nil, nil)
	h := &countingHandler{}
	w := 1.0
	st := NewStore(c, Options{Model: "fake", Logger: slog.New(h), Weight: &w})
	defer st.Close()
	ix := newIndex(t, st, index.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	before := srv.Calls.Load()
	srv.Fail.Store(true)
	lex := newIndex(t, nil, index.DefaultConfig())
	for _, q := range []string{"send an email", "read a file", "write the file", "will it rain"} {
		got, want := hitIDs(ix.Search(q, index.Options{})), hitIDs(lex.Search(q, index.Options{}))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q with a failing endpoint: %v, want the lexical %v", q, got, want)
		}
	}
	if len(h.warns) != 1 {
		t.Errorf("%d warnings logged, want 1: %q", len(h.warns), h.warns)
	}
	if status, reason := st.Diagnose(); status != "warning" || !strings.Contains(reason, "503") {
		t.Errorf("doctor: %s %q", status, reason)
	}
	// Only the first query after the failure waited for the endpoint.
	if n := srv.Calls.Load() - before; n != 1 {
		t.Errorf("%d calls to the failing endpoint; later queries should not retry at once", n)
	}
}

// blockingEmbedder embeds tool texts at once but answers a query (a text
// without ": ", which every tool text has) only when its context ends.
type blockingEmbedder struct{}

func (blockingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 1 && !strings.Contains(texts[0], ": ") {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

// TestQueryDeadline: a query whose embedding does not come back within
// QueryTimeout gets the lexical ranking.
func TestQueryDeadline(t *testing.T) {
	w := 1.0
	st := NewStore(blockingEmbedder{}, Options{Model: "b", QueryTimeout: 20 * time.Millisecond, BatchSize: 8, Weight: &w})
	defer st.Close()
	ix := newIndex(t, st, index.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Similar("send an email", index.Options{}, 5); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Similar err = %v, want a deadline", err)
	}
	lex := newIndex(t, nil, index.DefaultConfig())
	if got, want := hitIDs(ix.Search("read a file", index.Options{})), hitIDs(lex.Search("read a file", index.Options{})); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after a deadline: %v, want %v", got, want)
	}
}

// TestVectorsCachedOnDisk: a second store over the same cache file embeds
// nothing for unchanged tools, nor for the self-check (its texts and its
// outcome are cached too).
func TestVectorsCachedOnDisk(t *testing.T) {
	srv := embedtest.New()
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "vectors.bin")
	for round := range 2 {
		cache, err := OpenCache(path)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := NewClient(srv.URL+"/api/embed", "fake", nil, nil)
		st := NewStore(c, Options{Model: "fake", Cache: cache})
		newIndex(t, st, index.DefaultConfig())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := st.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		if s := st.Status(); s.Vectors != 4 {
			t.Errorf("round %d: %+v", round, s)
		}
		st.Close()
		if round == 0 {
			srv.Calls.Store(0)
		}
	}
	if n := srv.Calls.Load(); n != 0 {
		t.Errorf("second round called the endpoint %d times, want 0 (cached)", n)
	}
}
