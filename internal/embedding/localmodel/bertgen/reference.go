package bertgen

import "math"

// Forward is the reference forward pass: plain Go, float64 accumulation,
// one sequence (no padding, so no mask). It returns the last hidden state,
// one vector per token.
func (w *Weights) Forward(ids, types []int) [][]float32 {
	h := w.Hidden
	n := len(ids)
	x := make([][]float64, n)
	for t := range n {
		x[t] = make([]float64, h)
		for j := range h {
			x[t][j] = float64(w.Word[ids[t]*h+j]) + float64(w.Pos[t*h+j]) + float64(w.Type[types[t]*h+j])
		}
		layerNorm(x[t], w.EmbLNg, w.EmbLNb)
	}
	heads := w.Heads
	hd := h / heads
	scale := 1 / math.Sqrt(float64(hd))
	for _, l := range w.Encoder {
		q := affine(x, l.Q, l.Qb, h, h)
		k := affine(x, l.K, l.Kb, h, h)
		v := affine(x, l.V, l.Vb, h, h)
		ctx := make([][]float64, n)
		for t := range n {
			ctx[t] = make([]float64, h)
		}
		p := make([]float64, n)
		for hh := range heads {
			off := hh * hd
			for t := range n {
				maxv := math.Inf(-1)
				for u := range n {
					var s float64
					for j := range hd {
						s += q[t][off+j] * k[u][off+j]
					}
					p[u] = s * scale
					maxv = math.Max(maxv, p[u])
				}
				var sum float64
				for u := range n {
					p[u] = math.Exp(p[u] - maxv)
					sum += p[u]
				}
				for u := range n {
					for j := range hd {
						ctx[t][off+j] += p[u] / sum * v[u][off+j]
					}
				}
			}
		}
		att := affine(ctx, l.O, l.Ob, h, h)
		for t := range n {
			for j := range h {
				x[t][j] += att[t][j]
			}
			layerNorm(x[t], l.LN1g, l.LN1b)
		}
		inter := affine(x, l.In, l.Inb, h, w.Intermediate)
		for t := range inter {
			for j, z := range inter[t] {
				inter[t][j] = 0.5 * z * (1 + math.Erf(z/math.Sqrt2))
			}
		}
		out := affine(inter, l.Out, l.Outb, w.Intermediate, h)
		for t := range n {
			for j := range h {
				x[t][j] += out[t][j]
			}
			layerNorm(x[t], l.LN2g, l.LN2b)
		}
	}
	res := make([][]float32, n)
	for t := range n {
		res[t] = make([]float32, h)
		for j := range h {
			res[t][j] = float32(x[t][j])
		}
	}
	return res
}

// affine is x·W + b for row-major W [rows][cols].
func affine(x [][]float64, wt, b []float32, rows, cols int) [][]float64 {
	out := make([][]float64, len(x))
	for t, row := range x {
		o := make([]float64, cols)
		for j := range cols {
			o[j] = float64(b[j])
		}
		for i := range rows {
			xi := row[i]
			r := wt[i*cols : (i+1)*cols]
			for j := range cols {
				o[j] += xi * float64(r[j])
			}
		}
		out[t] = o
	}
	return out
}

func layerNorm(x []float64, g, b []float32) {
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var variance float64
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	variance /= float64(len(x))
	d := math.Sqrt(variance + LayerNormEps)
	for i, v := range x {
		x[i] = (v-mean)/d*float64(g[i]) + float64(b[i])
	}
}

// Pool is a sentence vector from the last hidden state: "mean" (over all
// tokens) or "cls" (the first), L2-normalised when normalize is set.
func Pool(hidden [][]float32, mode string, normalize bool) []float32 {
	out := make([]float32, len(hidden[0]))
	if mode == "cls" {
		copy(out, hidden[0])
	} else {
		for _, t := range hidden {
			for j, v := range t {
				out[j] += v
			}
		}
		for j := range out {
			out[j] /= float32(len(hidden))
		}
	}
	if normalize {
		var n float64
		for _, v := range out {
			n += float64(v) * float64(v)
		}
		n = math.Sqrt(n)
		for j := range out {
			out[j] = float32(float64(out[j]) / n)
		}
	}
	return out
}

// Cosine is the cosine similarity of a and b.
func Cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}
