package bertgen

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The ONNX protobuf is written field by field (protowire), with the field
// numbers of onnx.proto: no generated code, no dependency on an ONNX
// library, so the model tested is not made by the library that reads it.

// ONNX data types (TensorProto.DataType).
const (
	onnxFloat = 1
	onnxInt64 = 7
)

// AttributeProto.AttributeType.
const (
	attrFloat = 1
	attrInt   = 2
	attrInts  = 7
)

type attr struct {
	name string
	typ  int
	f    float32
	i    int64
	ints []int64
}

type node struct {
	op      string
	inputs  []string
	outputs []string
	attrs   []attr
}

type tensor struct {
	name string
	dims []int64
	typ  int
	f32  []float32
	i64  []int64
}

// graph accumulates nodes and initializers with fresh names.
type graph struct {
	nodes []node
	inits []tensor
	n     int
}

func (g *graph) fresh(prefix string) string {
	g.n++
	return fmt.Sprintf("%s_%d", prefix, g.n)
}

// op adds a node with one output and returns the output's name.
func (g *graph) op(op string, attrs []attr, inputs ...string) string {
	out := g.fresh(op)
	g.nodes = append(g.nodes, node{op: op, inputs: inputs, outputs: []string{out}, attrs: attrs})
	return out
}

func (g *graph) floats(name string, dims []int64, v []float32) string {
	g.inits = append(g.inits, tensor{name: name, dims: dims, typ: onnxFloat, f32: v})
	return name
}

func (g *graph) ints(dims []int64, v []int64) string {
	name := g.fresh("const")
	g.inits = append(g.inits, tensor{name: name, dims: dims, typ: onnxInt64, i64: v})
	return name
}

func (g *graph) scalar(v float32) string {
	return g.floats(g.fresh("const"), nil, []float32{v})
}

func encTensor(t tensor) []byte {
	var b []byte
	for _, d := range t.dims {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.typ))
	b = protowire.AppendTag(b, 8, protowire.BytesType)
	b = protowire.AppendString(b, t.name)
	var raw []byte
	switch t.typ {
	case onnxFloat:
		raw = make([]byte, 0, 4*len(t.f32))
		for _, x := range t.f32 {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
		}
	case onnxInt64:
		raw = make([]byte, 0, 8*len(t.i64))
		for _, x := range t.i64 {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(x))
		}
	}
	b = protowire.AppendTag(b, 9, protowire.BytesType)
	return protowire.AppendBytes(b, raw)
}

func encAttr(a attr) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, a.name)
	switch a.typ {
	case attrFloat:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.f))
	case attrInt:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(a.i))
	case attrInts:
		for _, x := range a.ints {
			b = protowire.AppendTag(b, 8, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(x))
		}
	}
	b = protowire.AppendTag(b, 20, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(a.typ))
}

func encNode(n node, name string) []byte {
	var b []byte
	for _, in := range n.inputs {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	for _, out := range n.outputs {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, out)
	}
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, n.op)
	for _, a := range n.attrs {
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, encAttr(a))
	}
	return b
}

// encValueInfo describes a tensor input or output; a dimension < 0 is
// symbolic (its name from params).
func encValueInfo(name string, elem int, dims []int64, params []string) []byte {
	var shape []byte
	for i, d := range dims {
		var dim []byte
		if d < 0 {
			dim = protowire.AppendTag(dim, 2, protowire.BytesType)
			dim = protowire.AppendString(dim, params[i])
		} else {
			dim = protowire.AppendTag(dim, 1, protowire.VarintType)
			dim = protowire.AppendVarint(dim, uint64(d))
		}
		shape = protowire.AppendTag(shape, 1, protowire.BytesType)
		shape = protowire.AppendBytes(shape, dim)
	}
	var tt []byte
	tt = protowire.AppendTag(tt, 1, protowire.VarintType)
	tt = protowire.AppendVarint(tt, uint64(elem))
	tt = protowire.AppendTag(tt, 2, protowire.BytesType)
	tt = protowire.AppendBytes(tt, shape)
	var typ []byte
	typ = protowire.AppendTag(typ, 1, protowire.BytesType)
	typ = protowire.AppendBytes(typ, tt)
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendBytes(b, typ)
}

// encode writes the ModelProto: IR version 7, opset 14 (what
// transformers' ONNX export of BERT-family models uses by default).
func (g *graph) encode(inputs, outputs [][]byte) []byte {
	var gb []byte
	for i, n := range g.nodes {
		gb = protowire.AppendTag(gb, 1, protowire.BytesType)
		gb = protowire.AppendBytes(gb, encNode(n, fmt.Sprintf("n%d_%s", i, n.op)))
	}
	gb = protowire.AppendTag(gb, 2, protowire.BytesType)
	gb = protowire.AppendString(gb, "bert")
	for _, t := range g.inits {
		gb = protowire.AppendTag(gb, 5, protowire.BytesType)
		gb = protowire.AppendBytes(gb, encTensor(t))
	}
	for _, in := range inputs {
		gb = protowire.AppendTag(gb, 11, protowire.BytesType)
		gb = protowire.AppendBytes(gb, in)
	}
	for _, out := range outputs {
		gb = protowire.AppendTag(gb, 12, protowire.BytesType)
		gb = protowire.AppendBytes(gb, out)
	}
	var opset []byte
	opset = protowire.AppendTag(opset, 1, protowire.BytesType)
	opset = protowire.AppendString(opset, "")
	opset = protowire.AppendTag(opset, 2, protowire.VarintType)
	opset = protowire.AppendVarint(opset, 14)
	var m []byte
	m = protowire.AppendTag(m, 1, protowire.VarintType)
	m = protowire.AppendVarint(m, 7)
	m = protowire.AppendTag(m, 2, protowire.BytesType)
	m = protowire.AppendString(m, "agent-tools bertgen")
	m = protowire.AppendTag(m, 7, protowire.BytesType)
	m = protowire.AppendBytes(m, gb)
	m = protowire.AppendTag(m, 8, protowire.BytesType)
	return protowire.AppendBytes(m, opset)
}
