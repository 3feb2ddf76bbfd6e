//go:build onnx

package localmodel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	gctx "github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/onnx-gomlx/onnx"
)

// Built reports whether this binary has the model runtime.
const Built = true

// Model is a model folder loaded in process: the tokenizer.json tokenizer
// (Tokenizer) and the ONNX graph run by GoMLX's pure-Go backend
// (onnx-gomlx, simplego), the engine under knights-analytics/hugot's Go
// backend. Open returns at once and loads in the background; Embed waits
// for the load (within its context). Safe for concurrent use.
type Model struct {
	spec  Spec
	ready chan struct{} // closed when loaded (or failed: err)
	err   error

	mu      sync.RWMutex // held (read) by Embed, (write) by Close
	closed  bool
	tk      *Tokenizer
	backend backends.Backend
	vars    *gctx.Context
	exec    *gctx.Exec
	inputs  []string // the graph's inputs, in order
	output  string
	outRank int
}

// Open checks the folder (Inspect) and starts loading it in the
// background. Load errors (a malformed model.onnx or tokenizer.json) come
// from Wait and Embed.
func Open(dir string) (*Model, error) {
	s, err := Inspect(dir)
	if err != nil {
		return nil, err
	}
	m := &Model{spec: s, ready: make(chan struct{})}
	go func() {
		defer close(m.ready)
		m.err = m.load()
		if m.err != nil {
			m.err = fmt.Errorf("model folder %s: %w", s.Dir, m.err)
		}
	}()
	return m, nil
}

// Load opens the folder and waits until it is loaded.
func Load(ctx context.Context, dir string) (*Model, error) {
	m, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if err := m.Wait(ctx); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Wait blocks until the model is loaded (nil) or failed to load.
func (m *Model) Wait(ctx context.Context) error {
	select {
	case <-m.ready:
		return m.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Spec is the folder's configuration.
func (m *Model) Spec() Spec { return m.spec }

// load reads the tokenizer and the graph; a panic in either library (a
// malformed file) becomes an error.
func (m *Model) load() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("loading failed: %v", r)
		}
	}()
	tb, err := os.ReadFile(filepath.Join(m.spec.Dir, "tokenizer.json"))
	if err != nil {
		return fmt.Errorf("tokenizer.json: %w", unwrapPath(err))
	}
	m.tk, err = loadTokenizer(tb)
	if err != nil {
		return fmt.Errorf("tokenizer.json: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(m.spec.Dir, m.spec.ONNX))
	if err != nil {
		return fmt.Errorf("%s: %w", m.spec.ONNX, unwrapPath(err))
	}
	om, err := parseONNX(raw)
	if err != nil {
		return fmt.Errorf("%s: not an ONNX model: %w", m.spec.ONNX, err)
	}
	if err := externalData(om, filepath.Dir(filepath.Join(m.spec.Dir, m.spec.ONNX))); err != nil {
		return fmt.Errorf("%s: %w", m.spec.ONNX, err)
	}
	names, _ := om.Inputs()
	for _, n := range names {
		switch n {
		case "input_ids", "attention_mask", "token_type_ids", "position_ids":
		default:
			return fmt.Errorf("%s: input %q is not one a text encoder takes (input_ids, attention_mask, token_type_ids, position_ids)", m.spec.ONNX, n)
		}
	}
	if !slices.Contains(names, "input_ids") {
		return fmt.Errorf("%s: no input_ids input: not a text encoder", m.spec.ONNX)
	}
	m.inputs = names
	outs, shapes := om.Outputs()
	if len(outs) == 0 {
		return fmt.Errorf("%s: the graph has no outputs", m.spec.ONNX)
	}
	// The token vectors (pooled here as the folder says), else a pooled
	// sentence vector the export computes itself.
	m.output, m.outRank = outs[0], shapes[0].Rank()
	for i, o := range outs {
		if o == "last_hidden_state" || o == "token_embeddings" {
			m.output, m.outRank = o, shapes[i].Rank()
			break
		}
	}
	if m.outRank != 3 && m.outRank != 2 {
		return fmt.Errorf("%s: output %q has rank %d (want [batch, tokens, hidden] or [batch, hidden])", m.spec.ONNX, m.output, m.outRank)
	}
	// ops_sequential: one op at a time (each op still uses the cores); the
	// parallel scheduler of simplego v0.26.0 races on its own bookkeeping
	// (go test -race), and an encoder is a chain of ops anyway.
	m.backend, err = simplego.New("ops_sequential")
	if err != nil {
		return err
	}
	m.vars = gctx.New()
	if err := om.VariablesToContext(m.vars); err != nil {
		m.backend.Finalize()
		return fmt.Errorf("%s: %w", m.spec.ONNX, err)
	}
	m.vars = m.vars.Reuse()
	inputs := m.inputs
	m.exec, err = gctx.NewExec(m.backend, m.vars, func(c *gctx.Context, in []*graph.Node) *graph.Node {
		byName := make(map[string]*graph.Node, len(in))
		for i, n := range inputs {
			byName[n] = in[i]
		}
		return om.CallGraph(c, in[0].Graph(), byName, m.output)[0]
	})
	if err != nil {
		m.backend.Finalize()
		return fmt.Errorf("%s: %w", m.spec.ONNX, err)
	}
	// Shapes are bucketed (shapeBucket), so a few programs serve all texts.
	m.exec.SetMaxCache(64)
	// Run it once: a graph the backend cannot build fails here, not at the
	// first search.
	if _, err := m.run([][]int{{0}}, [][]int{{0}}); err != nil {
		m.release()
		return err
	}
	return nil
}

// parseONNX parses a model file; onnx.Parse panics on some malformed
// ones (no graph).
func parseONNX(raw []byte) (om *onnx.Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			om, err = nil, fmt.Errorf("%v", r)
		}
	}()
	if len(raw) == 0 {
		return nil, errors.New("empty file")
	}
	return onnx.Parse(raw)
}

// externalData fills initializers stored beside the model (a
// model.onnx_data file, as exports over 2 GB have), from files inside dir.
func externalData(om *onnx.Model, dir string) error {
	files := map[string][]byte{}
	for _, t := range om.Proto.Graph.Initializer {
		if len(t.ExternalData) == 0 {
			continue
		}
		loc, off, length := "", int64(0), int64(-1)
		for _, e := range t.ExternalData {
			var err error
			switch e.Key {
			case "location":
				loc = e.Value
			case "offset":
				off, err = strconv.ParseInt(e.Value, 10, 64)
			case "length":
				length, err = strconv.ParseInt(e.Value, 10, 64)
			}
			if err != nil {
				return fmt.Errorf("tensor %q: bad external data %s: %v", t.Name, e.Key, err)
			}
		}
		if !filepath.IsLocal(loc) {
			return fmt.Errorf("tensor %q: external data %q is not a file in the model folder", t.Name, loc)
		}
		b, ok := files[loc]
		if !ok {
			var err error
			if b, err = os.ReadFile(filepath.Join(dir, loc)); err != nil {
				return fmt.Errorf("external data: %w", err)
			}
			files[loc] = b
		}
		end := int64(len(b))
		if length >= 0 {
			end = off + length
		}
		if off < 0 || off > end || end > int64(len(b)) {
			return fmt.Errorf("tensor %q: external data out of %s's bounds", t.Name, loc)
		}
		t.RawData = b[off:end]
		t.ExternalData = nil
		t.DataLocation = 0
	}
	return nil
}

func loadTokenizer(b []byte) (*Tokenizer, error) {
	return ParseTokenizer(b)
}

// encode tokenizes text: ids and type ids, at most MaxTokens (the text is
// cut, [CLS] and [SEP] kept).
func (m *Model) encode(text string) (ids, types []int, err error) {
	ids, types = m.tk.Encode(text, m.spec.MaxTokens)
	if len(ids) == 0 {
		// A tokenizer without a template and a text without words: the
		// model still needs one token.
		ids, types = []int{m.tk.unk}, []int{0}
	}
	return ids, types, nil
}

// Batching: texts are run in batches of up to batchMax, padded to a bucket
// of batch size and token count, so that the backend compiles a few
// programs, not one per length.
const batchMax = 8

var (
	batchBuckets = []int{1, 2, 4, 8}
	tokenBuckets = []int{16, 32, 48, 64, 96, 128, 192, 256, 384, 512}
)

func shapeBucket(n int, buckets []int) int {
	for _, b := range buckets {
		if n <= b {
			return b
		}
	}
	return n
}

// Embed implements embedding.Embedder: one vector per text, pooled as the
// folder says (mean or [CLS]), L2-normalised when it lists Normalize. It
// waits for the model to load within ctx, and checks ctx between batches.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := m.Wait(ctx); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, errors.New("model closed")
	}
	ids := make([][]int, len(texts))
	types := make([][]int, len(texts))
	for i, t := range texts {
		var err error
		if ids[i], types[i], err = m.encode(t); err != nil {
			return nil, err
		}
	}
	// Shortest first, so each batch pads little.
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(ids[a]) - len(ids[b]) })
	out := make([][]float32, len(texts))
	for start := 0; start < len(order); start += batchMax {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		part := order[start:min(start+batchMax, len(order))]
		bi, bt := make([][]int, len(part)), make([][]int, len(part))
		for j, i := range part {
			bi[j], bt[j] = ids[i], types[i]
		}
		vecs, err := m.run(bi, bt)
		if err != nil {
			return nil, fmt.Errorf("model folder %s: %w", m.spec.Dir, err)
		}
		for j, i := range part {
			out[i] = vecs[j]
		}
	}
	return out, nil
}

// run executes one padded batch and pools each row.
func (m *Model) run(ids, types [][]int) (vecs [][]float32, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("running the model: %v", r)
		}
	}()
	longest := 0
	for _, s := range ids {
		longest = max(longest, len(s))
	}
	b, n := shapeBucket(len(ids), batchBuckets), shapeBucket(longest, tokenBuckets)
	in := make([]*tensors.Tensor, len(m.inputs))
	for k, name := range m.inputs {
		flat := make([]int64, b*n)
		for r, s := range ids {
			for t := range s {
				switch name {
				case "input_ids":
					flat[r*n+t] = int64(s[t])
				case "attention_mask":
					flat[r*n+t] = 1
				case "token_type_ids":
					flat[r*n+t] = int64(types[r][t])
				}
			}
		}
		if name == "position_ids" {
			for r := range b {
				for t := range n {
					flat[r*n+t] = int64(t)
				}
			}
		}
		in[k] = tensors.FromFlatDataAndDimensions(flat, b, n)
	}
	defer func() {
		for _, t := range in {
			_ = t.FinalizeAll()
		}
	}()
	outs, err := m.exec.Exec(in)
	if err != nil {
		return nil, fmt.Errorf("running the model: %w", err)
	}
	out := outs[0]
	defer func() {
		for _, t := range outs {
			_ = t.FinalizeAll()
		}
	}()
	dims := out.Shape().Dimensions
	hidden := dims[len(dims)-1]
	if m.outRank == 3 && m.spec.Hidden > 0 && hidden != m.spec.Hidden {
		return nil, fmt.Errorf("the model's vectors have %d dimensions, config.json says hidden_size %d", hidden, m.spec.Hidden)
	}
	err = tensors.ConstFlatData(out, func(flat []float32) {
		vecs = make([][]float32, len(ids))
		for r, s := range ids {
			v := make([]float32, hidden)
			switch {
			case m.outRank == 2:
				copy(v, flat[r*hidden:(r+1)*hidden])
			case m.spec.Pooling == PoolCLS:
				copy(v, flat[r*n*hidden:r*n*hidden+hidden])
			default:
				for t := range s {
					row := flat[(r*n+t)*hidden : (r*n+t+1)*hidden]
					for j, x := range row {
						v[j] += x
					}
				}
				for j := range v {
					v[j] /= float32(len(s))
				}
			}
			if m.spec.Normalize {
				normalize(v)
			}
			vecs[r] = v
		}
	})
	if err != nil {
		return nil, fmt.Errorf("reading the model's output: %w", err)
	}
	return vecs, nil
}

func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
}

// Close releases the model once no Embed is running (and, when it is
// still loading, once the load has ended: Close does not wait for it).
func (m *Model) Close() error {
	free := func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if !m.closed && m.err == nil {
			m.release()
		}
		m.closed = true
	}
	select {
	case <-m.ready:
		free()
	default:
		go func() { <-m.ready; free() }()
	}
	return nil
}

func (m *Model) release() {
	m.exec.Finalize()
	m.vars.Finalize()
	m.backend.Finalize()
}
