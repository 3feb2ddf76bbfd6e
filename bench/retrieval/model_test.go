package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/embedding/localmodel"
	"github.com/agent-tools/agent-tools/internal/embedding/localmodel/bertgen"
)

// TestModelFolderFlag: --model DIR runs a model folder in process and
// reports it beside the lexical ranking, with its cost (-tags onnx); in a
// build without the runtime it says how to build with it.
func TestModelFolderFlag(t *testing.T) {
	dir := t.TempDir()
	var tools, queries bytes.Buffer
	topics := []string{"weather forecast", "stock price", "calendar event", "email message", "database table", "file search"}
	for i := range 24 {
		topic := topics[i%len(topics)]
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("t%d", i), "server": fmt.Sprintf("s%d", i%4), "name": fmt.Sprintf("tool_%d", i),
			"description": fmt.Sprintf("Get the %s for a user, number %d.", topic, i), "input_schema": map[string]any{"type": "object"}})
		tools.Write(append(b, '\n'))
		q, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("q%d", i), "query": "find the " + topic, "needs": [][]string{{fmt.Sprintf("t%d", i)}}})
		queries.Write(append(q, '\n'))
	}
	tp, qp := filepath.Join(dir, "tools.jsonl"), filepath.Join(dir, "queries.jsonl")
	if err := os.WriteFile(tp, tools.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(qp, queries.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "model")
	vocab := bertgen.Vocab()
	if err := (bertgen.Folder{Weights: bertgen.Random(bertgen.Small(len(vocab)), 5), Vocab: vocab, Pooling: "mean", Normalize: true}).Write(model); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run([]string{"--tools", tp, "--queries", qp, "--model", model}, &out)
	if !localmodel.Built {
		if err == nil || !strings.Contains(err.Error(), localmodel.BuildCommand) {
			t.Fatalf("without the runtime: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| lexical |", "| model alone |", "| fused, default weight |", "| fused, self-check's weight |", "model cost: 24 tools embedded in"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
