// Package localmodel is the in-process embeddings backend behind
// index.semantic.model: a folder holding a Hugging Face ONNX export of a
// sentence-embedding model (model.onnx or onnx/model.onnx, tokenizer.json,
// config.json, and the Sentence-Transformers pooling files when present).
// Model satisfies the same embedding.Embedder interface as the HTTP
// client, so the store's background filling, vector cache and self-check
// apply unchanged.
//
// The runtime (knights-analytics/hugot's pure-Go backend, GoMLX) is linked
// only with the build tag onnx; without it, Open reports how to build with
// it (ErrNotBuilt). Inspect, which checks a folder, works in every build.
package localmodel

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// BuildCommand is how to build a binary with the model runtime.
const BuildCommand = "go build -tags onnx ./cmd/agent-tools"

// ErrNotBuilt: this binary has no model runtime.
var ErrNotBuilt = errors.New("index.semantic.model needs the in-process model runtime, which this binary was built without; build with it: " + BuildCommand)

// Pooling modes a folder may declare.
const (
	PoolMean = "mean" // the mean of the tokens' vectors (the default)
	PoolCLS  = "cls"  // the first token's ([CLS]) vector
)

// DefaultMaxTokens bounds a text's tokens when config.json does not (and
// caps max_position_embeddings: longer texts cost quadratic time for little).
const DefaultMaxTokens = 512

// Spec is what a model folder holds and declares.
type Spec struct {
	Dir       string // absolute
	ONNX      string // the model file, relative to Dir
	Pooling   string // PoolMean or PoolCLS
	Normalize bool   // modules.json lists a Normalize module
	MaxTokens int    // a text's tokens are cut to this many ([CLS] … [SEP]): sentence_bert_config.json's max_seq_length, else config.json's max_position_embeddings, at most DefaultMaxTokens
	Hidden    int    // config.json hidden_size (0: unknown)
	// ID names the model in the vector cache's keys: a hash of the
	// tokenizer and configuration files, the model file's size and 16
	// samples of its bytes, so a changed model never reuses old vectors and
	// a copied folder reuses them, without reading all of a large file.
	ID string
}

// Inspect checks a model folder and reads its configuration. Errors name
// the folder and what is missing or malformed.
func Inspect(dir string) (Spec, error) {
	fail := func(format string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("model folder %s: %s", dir, fmt.Sprintf(format, a...))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fail("%v", err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return fail("%v", unwrapPath(err))
	case !fi.IsDir():
		return fail("not a directory (want a folder with model.onnx and tokenizer.json, as a Hugging Face ONNX export has)")
	}
	s := Spec{Dir: abs, Pooling: PoolMean, MaxTokens: DefaultMaxTokens}
	for _, c := range []string{"model.onnx", filepath.Join("onnx", "model.onnx")} {
		if fi, err := os.Stat(filepath.Join(abs, c)); err == nil && fi.Mode().IsRegular() {
			s.ONNX = c
			break
		}
	}
	if s.ONNX == "" {
		return fail("no model.onnx (nor onnx/model.onnx): export the model to ONNX first, e.g. optimum-cli export onnx --model BAAI/bge-small-en-v1.5 DIR")
	}
	if fi, err := os.Stat(filepath.Join(abs, "tokenizer.json")); err != nil || !fi.Mode().IsRegular() {
		return fail("no tokenizer.json (the Hugging Face fast-tokenizer file the export writes beside the model)")
	}

	h := sha256.New()
	// config.json: the encoder's limits (optional).
	var cfg struct {
		MaxPositions *int `json:"max_position_embeddings"`
		Hidden       int  `json:"hidden_size"`
	}
	if err := readJSON(abs, "config.json", &cfg, h); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail("%v", err)
	}
	if cfg.MaxPositions != nil && *cfg.MaxPositions > 2 {
		s.MaxTokens = min(*cfg.MaxPositions, DefaultMaxTokens)
	}
	// sentence_bert_config.json: the length Sentence-Transformers cuts
	// texts to (all-MiniLM-L6-v2: 256; optional).
	var st struct {
		MaxSeq int `json:"max_seq_length"`
	}
	if err := readJSON(abs, "sentence_bert_config.json", &st, h); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail("%v", err)
	}
	if st.MaxSeq > 2 {
		s.MaxTokens = min(s.MaxTokens, st.MaxSeq)
	}
	s.Hidden = cfg.Hidden
	// modules.json and 1_Pooling/config.json: the Sentence-Transformers
	// pipeline (optional; without them, mean pooling, no normalisation).
	var mods []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	}
	poolDir := "1_Pooling"
	if err := readJSON(abs, "modules.json", &mods, h); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail("%v", err)
	}
	for _, m := range mods {
		switch filepath.Ext(m.Type) {
		case ".Pooling":
			if m.Path != "" {
				poolDir = filepath.Clean(m.Path)
			}
		case ".Normalize":
			s.Normalize = true
		}
	}
	var pool map[string]any
	if err := readJSON(abs, filepath.Join(poolDir, "config.json"), &pool, h); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail("%v", err)
	}
	if pool != nil {
		mode, err := poolingMode(pool)
		if err != nil {
			return fail("%s/config.json: %v", poolDir, err)
		}
		s.Pooling = mode
	}
	if err := hashFile(h, filepath.Join(abs, "tokenizer.json"), false); err != nil {
		return fail("%v", err)
	}
	if err := hashFile(h, filepath.Join(abs, s.ONNX), true); err != nil {
		return fail("%v", err)
	}
	s.ID = fmt.Sprintf("local:%x", h.Sum(nil)[:12])
	return s, nil
}

// poolingMode reads a Sentence-Transformers pooling config.
func poolingMode(c map[string]any) (string, error) {
	if m, ok := c["pooling_mode"].(string); ok { // newer files name it
		switch m {
		case "mean", "cls":
			return m, nil
		}
		return "", fmt.Errorf("pooling_mode %q is not supported (mean and cls are)", m)
	}
	on := func(k string) bool { b, _ := c[k].(bool); return b }
	for _, k := range []string{"pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"} {
		if on(k) {
			return "", fmt.Errorf("%s is not supported (mean and cls pooling are)", k)
		}
	}
	switch {
	case on("pooling_mode_cls_token") && on("pooling_mode_mean_tokens"):
		return "", errors.New("both cls and mean pooling: concatenated poolings are not supported")
	case on("pooling_mode_cls_token"):
		return PoolCLS, nil
	}
	return PoolMean, nil
}

// maxConfig bounds a configuration file's size.
const maxConfig = 1 << 20

// readJSON decodes dir/name into v and hashes its bytes; a missing file is
// os.ErrNotExist.
func readJSON(dir, name string, v any, h hash.Hash) error {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return os.ErrNotExist
		}
		return fmt.Errorf("%s: %v", name, unwrapPath(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfig+1))
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	if len(b) > maxConfig {
		return fmt.Errorf("%s: larger than %d bytes", name, maxConfig)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: malformed JSON: %v", name, err)
	}
	h.Write([]byte(name))
	h.Write(b)
	return nil
}

// hashFile adds path to h: all of it, or (sampled) its size and 16 blocks
// of 64 KiB spread over it.
func hashFile(h hash.Hash, path string, sampled bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %v", filepath.Base(path), unwrapPath(err))
	}
	defer f.Close()
	if !sampled {
		_, err = io.Copy(h, f)
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(size)))
	const block, samples = 64 << 10, 16
	buf := make([]byte, block)
	for i := range int64(samples) {
		off := max(0, (size-block)*i/(samples-1))
		n, err := f.ReadAt(buf, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: %v", filepath.Base(path), err)
		}
		h.Write(buf[:n])
	}
	return nil
}

// unwrapPath drops the path a *PathError repeats (the message names the
// folder already).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
