// Package embedtest is a deterministic fake embeddings endpoint on
// 127.0.0.1 for tests and benchmarks: it speaks both the OpenAI-compatible
// /v1/embeddings and the Ollama /api/embed formats and returns hashed
// bag-of-words vectors, where a few words share a "concept" dimension
// ("rain" and "forecast" are near "weather"), so that fusion is tested on
// vectors that rank differently from BM25. It measures the plumbing and
// the fusion, not the quality of any real model.
package embedtest

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"unicode"
)

// Dim is the vectors' dimension.
const Dim = 256

// concepts map words to a shared concept, the fake's whole "semantics".
var concepts = map[string]string{
	"rain": "weather", "raining": "weather", "forecast": "weather", "temperature": "weather", "umbrella": "weather", "sunny": "weather",
	"trip": "geo", "travel": "geo", "route": "geo", "directions": "geo", "geocode": "geo", "coordinates": "geo", "address": "geo",
	"stock": "finance", "shares": "finance", "price": "finance", "market": "finance",
	"song": "music", "audio": "music", "track": "music", "beat": "music",
}

// Vector is the fake embedding of text.
func Vector(text string) []float32 {
	v := make([]float32, Dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w = strings.TrimSuffix(w, "s")
		if len(w) < 3 {
			continue
		}
		add(v, w, 1)
		if c, ok := concepts[w]; ok {
			add(v, "concept:"+c, 2)
		}
	}
	return v
}

func add(v []float32, feature string, w float32) {
	h := fnv.New32a()
	h.Write([]byte(feature))
	x := h.Sum32()
	sign := float32(1)
	if x&1 == 1 {
		sign = -1
	}
	v[(x>>1)%Dim] += sign * w
}

// Server is a running fake endpoint.
type Server struct {
	*httptest.Server
	Calls atomic.Int64 // requests served
	// Fail, when set, makes every request answer 503.
	Fail atomic.Bool
	// Header, when set, is required on every request as "Authorization".
	Header string
}

// New starts a fake endpoint; Close it when done. Its URLs are
// URL+"/v1/embeddings" and URL+"/api/embed".
func New() *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Calls.Add(1)
	if s.Fail.Load() {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	if s.Header != "" && r.Header.Get("Authorization") != s.Header {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	vecs := make([][]float32, len(req.Input))
	for i, t := range req.Input {
		vecs[i] = Vector(t)
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/embed":
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": vecs})
	case "/v1/embeddings":
		data := make([]map[string]any, len(vecs))
		for i, v := range vecs {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data})
	default:
		http.NotFound(w, r)
	}
}

// Noise is a model that knows nothing: a pseudo-random unit-free vector per
// text (seeded by the text's hash), the same for the same text and
// unrelated for any two texts, like a wrong model name behind a proxy.
func Noise(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	x := h.Sum64() | 1
	v := make([]float32, Dim)
	for i := range v {
		// xorshift64*: deterministic, uniform enough for cosine noise.
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		v[i] = float32(int64(x*0x2545F4914F6CDD1D)>>11) / float32(1<<52)
	}
	return v
}

// Func is an in-process model (no HTTP): it embeds each text with its
// function (Vector, Noise, or a test's own).
type Func func(string) []float32

// Embed embeds texts one by one (the embedding.Embedder interface).
func (f Func) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = f(t)
	}
	return out, nil
}
