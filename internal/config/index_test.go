package config_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestIndexEmbeddings(t *testing.T) {
	c, err := parse(t, `
index:
  embeddings:
    url: http://127.0.0.1:11434/api/embed
    model: nomic-embed-text
    headers: { Authorization: "Bearer ${REMOTE_TOKEN}" }
    timeout: 250ms
`)
	if err != nil {
		t.Fatal(err)
	}
	e := c.Index.Embeddings
	if !e.Enabled() || e.URL != "http://127.0.0.1:11434/api/embed" || e.Model != "nomic-embed-text" ||
		e.Headers["Authorization"] != "Bearer remote-secret-value" || e.Timeout.Duration != 250*time.Millisecond {
		t.Errorf("decoded %+v", e)
	}
	b, _ := json.Marshal(c.Redacted())
	if strings.Contains(string(b), "remote-secret-value") {
		t.Errorf("Redacted leaks the header: %s", b)
	}
	if c, _ := parse(t, "mode: flat\n"); c.Index.Embeddings.Enabled() || c.Index.Semantic.Weight != nil {
		t.Error("embeddings enabled without config")
	}
	if c, err := parse(t, "progressive:\n  groupAbove: 12\n"); err != nil || c.Progressive.GroupAbove != 12 {
		t.Errorf("progressive.groupAbove: %v %+v", err, c.Progressive)
	}
	if c, err := parse(t, "index:\n  semantic:\n    model: ./models/bge-small\n"); err != nil || !c.Index.Semantic.Enabled() ||
		!filepath.IsAbs(c.Index.Semantic.Model) || !strings.HasSuffix(c.Index.Semantic.Model, filepath.Join("models", "bge-small")) {
		t.Errorf("index.semantic.model (resolved against the config's folder): %v %+v", err, c.Index.Semantic)
	}
	if c, err := parse(t, "index:\n  semantic:\n    weight: 0.2\n"); err != nil || c.Index.Semantic.Weight == nil || *c.Index.Semantic.Weight != 0.2 {
		t.Errorf("index.semantic.weight: %v %+v", err, c.Index.Semantic)
	}
}

func TestIndexEmbeddingsErrors(t *testing.T) {
	for _, c := range []struct {
		name, src, want string
	}{
		{"unknown key", "index:\n  embedings: {}\n", `agent-tools.yaml:2:3: index: unknown key "embedings"; did you mean "embeddings"?`},
		{"unknown embeddings key", "index:\n  embeddings:\n    modle: x\n", `did you mean "model"?`},
		{"no model", "index:\n  embeddings:\n    url: http://127.0.0.1:11434/api/embed\n", "index.embeddings.model: embeddings need a model"},
		{"no url", "index:\n  embeddings:\n    model: m\n", "index.embeddings.url: embeddings need a url"},
		{"bad url", "index:\n  embeddings:\n    url: http://127.0.0.1:11434\n    model: m\n", "agent-tools.yaml:3:10: index.embeddings.url: want an http(s) endpoint"},
		{"bad url from a variable is not printed", "index:\n  embeddings:\n    url: \"ftp://x/${REMOTE_TOKEN}\"\n    model: m\n", "want an http(s) endpoint"},
		{"headers not a mapping", "index:\n  embeddings:\n    url: http://h/v1/embeddings\n    model: m\n    headers: [a]\n", "index.embeddings.headers: want a mapping"},
		{"bad timeout", "index:\n  embeddings:\n    url: http://h/v1/embeddings\n    model: m\n    timeout: 5\n", "add a unit"},
		{"index not a mapping", "index: yes\n", "index: want a mapping"},
		{"weight not a number", "index:\n  semantic:\n    weight: high\n", "index.semantic.weight: want a number from 0"},
		{"weight negative", "index:\n  semantic:\n    weight: -1\n", "got -1"},
		{"unknown semantic key", "index:\n  semantic:\n    wieght: 1\n", `did you mean "weight"?`},
		{"model not a path", "index:\n  semantic:\n    model: [a]\n", "index.semantic.model: want the path of a model folder"},
		{"model empty", "index:\n  semantic:\n    model: \" \"\n", "index.semantic.model: want the path of a model folder"},
		{"model and endpoint", "index:\n  semantic:\n    model: ./m\n  embeddings:\n    url: http://h/v1/embeddings\n    model: m\n", "agent-tools.yaml:3:12: index.semantic.model: index.embeddings.url is set too"},
		{"missing variable", "index:\n  embeddings:\n    url: http://h/v1/embeddings\n    model: m\n    headers: {Authorization: \"${NOPE}\"}\n", "environment variable NOPE is not set"},
	} {
		_, err := parse(t, c.src)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q lacks %q", c.name, err, c.want)
		}
		if strings.Contains(err.Error(), "remote-secret-value") {
			t.Errorf("%s: error leaks a variable's value: %v", c.name, err)
		}
	}
}
