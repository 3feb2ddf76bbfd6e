// Package bertgen makes BERT-architecture sentence-embedding models for
// tests and benchmarks: random weights (fixed seed) in a chosen shape, the
// ONNX graph a Hugging Face export of such a model has (opset 14, layer
// norm and GELU spelled out in primitive ops, inputs input_ids,
// attention_mask and token_type_ids, output last_hidden_state), a WordPiece
// tokenizer.json, the Sentence-Transformers pooling files, and an
// independent plain-Go forward pass and tokenizer to check a runtime's
// vectors against. Nothing here is a trained model: the vectors mean
// nothing, they only have to agree.
package bertgen

import (
	"math"
	"math/rand/v2"
)

// Shape is a BERT encoder's size.
type Shape struct {
	Layers, Hidden, Heads, Intermediate int
	Vocab, MaxPositions, TypeVocab      int
}

// MiniLM is the shape of all-MiniLM-L6-v2 (and, but for 12 layers,
// bge-small): 6 layers, hidden 384, 12 heads, intermediate 1536, the
// 30,522-word BERT vocabulary, 512 positions.
func MiniLM() Shape {
	return Shape{Layers: 6, Hidden: 384, Heads: 12, Intermediate: 1536, Vocab: 30522, MaxPositions: 512, TypeVocab: 2}
}

// Small is a 2-layer, 64-wide shape: seconds to build, load and run.
func Small(vocab int) Shape {
	return Shape{Layers: 2, Hidden: 64, Heads: 4, Intermediate: 128, Vocab: vocab, MaxPositions: 128, TypeVocab: 2}
}

// LayerNormEps is BERT's layer-norm epsilon.
const LayerNormEps = 1e-12

// Layer is one encoder layer's weights; matrices are row-major [in][out].
type Layer struct {
	Q, K, V, O, Qb, Kb, Vb, Ob []float32
	LN1g, LN1b                 []float32
	In, Inb, Out, Outb         []float32
	LN2g, LN2b                 []float32
}

// Weights is a whole model.
type Weights struct {
	Shape
	Word, Pos, Type []float32
	EmbLNg, EmbLNb  []float32
	Encoder         []Layer
}

// Random makes weights of shape s from seed. The embeddings are drawn wider
// than a trained model's (σ 1 against 0.02 for the matrices) so that
// different texts give clearly different vectors: a comparison at cosine
// .999 then tells a wrong token or position from a right one.
func Random(s Shape, seed uint64) *Weights {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	norm := func(n int, sd float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * sd)
		}
		return v
	}
	around := func(n int, mean, sd float64) []float32 {
		v := norm(n, sd)
		for i := range v {
			v[i] += float32(mean)
		}
		return v
	}
	h, in := s.Hidden, s.Intermediate
	mat := 1 / math.Sqrt(float64(h))
	w := &Weights{Shape: s,
		Word: norm(s.Vocab*h, 1), Pos: norm(s.MaxPositions*h, 0.5), Type: norm(s.TypeVocab*h, 0.5),
		EmbLNg: around(h, 1, 0.1), EmbLNb: norm(h, 0.1)}
	for range s.Layers {
		w.Encoder = append(w.Encoder, Layer{
			Q: norm(h*h, mat), K: norm(h*h, mat), V: norm(h*h, mat), O: norm(h*h, mat),
			Qb: norm(h, 0.1), Kb: norm(h, 0.1), Vb: norm(h, 0.1), Ob: norm(h, 0.1),
			LN1g: around(h, 1, 0.1), LN1b: norm(h, 0.1),
			In: norm(h*in, mat), Inb: norm(in, 0.1), Out: norm(in*h, 1/math.Sqrt(float64(in))), Outb: norm(h, 0.1),
			LN2g: around(h, 1, 0.1), LN2b: norm(h, 0.1),
		})
	}
	return w
}

// ONNX is the model as an ONNX file: inputs input_ids, attention_mask and
// token_type_ids (int64 [batch_size, sequence_length]), output
// last_hidden_state (float [batch_size, sequence_length, hidden]), the
// graph torch.onnx exports for BertModel at opset 14.
func (w *Weights) ONNX() []byte {
	g := &graph{}
	h, heads := int64(w.Hidden), int64(w.Heads)
	hd := h / heads

	// Embeddings: word + position (sliced to the sequence's length) + type.
	word := g.op("Gather", nil, g.floats("embeddings.word_embeddings.weight", []int64{int64(w.Vocab), h}, w.Word), "input_ids")
	posIDs := make([]int64, w.MaxPositions)
	for i := range posIDs {
		posIDs[i] = int64(i)
	}
	posBuf := g.ints([]int64{1, int64(w.MaxPositions)}, posIDs)
	seqLen := g.op("Gather", []attr{{name: "axis", typ: attrInt, i: 0}}, g.op("Shape", nil, "input_ids"), g.ints(nil, []int64{1}))
	seqLen1 := g.op("Unsqueeze", nil, seqLen, g.ints([]int64{1}, []int64{0}))
	pos := g.op("Slice", nil, posBuf, g.ints([]int64{1}, []int64{0}), seqLen1, g.ints([]int64{1}, []int64{1}))
	posEmb := g.op("Gather", nil, g.floats("embeddings.position_embeddings.weight", []int64{int64(w.MaxPositions), h}, w.Pos), pos)
	typEmb := g.op("Gather", nil, g.floats("embeddings.token_type_embeddings.weight", []int64{int64(w.TypeVocab), h}, w.Type), "token_type_ids")
	x := g.op("Add", nil, g.op("Add", nil, word, typEmb), posEmb)
	x = g.layerNorm(x, "embeddings.LayerNorm", w.EmbLNg, w.EmbLNb)

	// The extended attention mask: (1 - mask) * -10000, [B, 1, 1, S].
	m := g.op("Cast", []attr{{name: "to", typ: attrInt, i: onnxFloat}}, g.op("Unsqueeze", nil, "attention_mask", g.ints([]int64{2}, []int64{1, 2})))
	mask := g.op("Mul", nil, g.op("Sub", nil, g.scalar(1), m), g.scalar(-10000))

	headShape := g.ints([]int64{4}, []int64{0, 0, heads, hd})
	flatShape := g.ints([]int64{3}, []int64{0, 0, h})
	for i, l := range w.Encoder {
		p := "encoder.layer." + itoa(i) + "."
		proj := func(in, name string, wt, b []float32, rows, cols int64) string {
			mm := g.op("MatMul", nil, in, g.floats(p+name+".weight", []int64{rows, cols}, wt))
			return g.op("Add", nil, g.floats(p+name+".bias", []int64{cols}, b), mm)
		}
		split := func(t string, perm []int64) string {
			return g.op("Transpose", []attr{{name: "perm", typ: attrInts, ints: perm}}, g.op("Reshape", nil, t, headShape))
		}
		q := split(proj(x, "attention.self.query", l.Q, l.Qb, h, h), []int64{0, 2, 1, 3})
		k := split(proj(x, "attention.self.key", l.K, l.Kb, h, h), []int64{0, 2, 3, 1})
		v := split(proj(x, "attention.self.value", l.V, l.Vb, h, h), []int64{0, 2, 1, 3})
		scores := g.op("Div", nil, g.op("MatMul", nil, q, k), g.scalar(float32(math.Sqrt(float64(hd)))))
		probs := g.op("Softmax", []attr{{name: "axis", typ: attrInt, i: -1}}, g.op("Add", nil, scores, mask))
		ctx := g.op("Transpose", []attr{{name: "perm", typ: attrInts, ints: []int64{0, 2, 1, 3}}}, g.op("MatMul", nil, probs, v))
		ctx = g.op("Reshape", nil, ctx, flatShape)
		att := proj(ctx, "attention.output.dense", l.O, l.Ob, h, h)
		x = g.layerNorm(g.op("Add", nil, att, x), p+"attention.output.LayerNorm", l.LN1g, l.LN1b)
		inter := proj(x, "intermediate.dense", l.In, l.Inb, h, int64(w.Intermediate))
		// GELU: x * 0.5 * (1 + erf(x / √2)), as torch exports it.
		erf := g.op("Erf", nil, g.op("Div", nil, inter, g.scalar(float32(math.Sqrt2))))
		gelu := g.op("Mul", nil, g.op("Mul", nil, inter, g.op("Add", nil, erf, g.scalar(1))), g.scalar(0.5))
		out := proj(gelu, "output.dense", l.Out, l.Outb, int64(w.Intermediate), h)
		x = g.layerNorm(g.op("Add", nil, out, x), p+"output.LayerNorm", l.LN2g, l.LN2b)
	}
	g.nodes = append(g.nodes, node{op: "Identity", inputs: []string{x}, outputs: []string{"last_hidden_state"}})

	dyn := []int64{-1, -1}
	names := []string{"batch_size", "sequence_length"}
	inputs := [][]byte{
		encValueInfo("input_ids", onnxInt64, dyn, names),
		encValueInfo("attention_mask", onnxInt64, dyn, names),
		encValueInfo("token_type_ids", onnxInt64, dyn, names),
	}
	outputs := [][]byte{encValueInfo("last_hidden_state", onnxFloat, []int64{-1, -1, h}, append(names, ""))}
	return g.encode(inputs, outputs)
}

// layerNorm spells out LayerNorm over the last axis as opset-14 exports do.
func (g *graph) layerNorm(x, name string, gamma, beta []float32) string {
	axes := []attr{{name: "axes", typ: attrInts, ints: []int64{-1}}}
	n := int64(len(gamma))
	mean := g.op("ReduceMean", axes, x)
	d := g.op("Sub", nil, x, mean)
	variance := g.op("ReduceMean", axes, g.op("Pow", nil, d, g.scalar(2)))
	std := g.op("Sqrt", nil, g.op("Add", nil, variance, g.scalar(LayerNormEps)))
	y := g.op("Mul", nil, g.op("Div", nil, d, std), g.floats(name+".weight", []int64{n}, gamma))
	return g.op("Add", nil, y, g.floats(name+".bias", []int64{n}, beta))
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
