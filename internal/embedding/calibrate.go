package embedding

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/index"
)

// The self-check (index.Calibrate): once every tool has a vector and the
// catalog has been unchanged for CalibrationDelay, the filler samples up to
// CalibrationTools tools, embeds their calibration documents and held-out
// queries (through the vector cache, so a restart embeds nothing again),
// and ranks the queries lexically, by the model and fused at each weight.
// The outcome is cached in the vector cache too, under a key of the
// sample's texts, the ranking's fusion settings and calVersion.

// calDoc is one tool's calibration document and its held-out queries.
type calDoc struct {
	doc     index.Doc
	queries []index.CalQuery
}

// calVersion changes whenever the self-check's rules do (cached outcomes
// of an older version are ignored).
const calVersion = "agent-tools self-check v1"

var _ index.Weigher = (*Store)(nil)

// FusionWeight implements index.Weigher: the configured weight, else the
// self-check's, else 0 (lexical alone) until the self-check has run.
func (s *Store) FusionWeight() float64 {
	if s.opts.Weight != nil {
		return *s.opts.Weight
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cal == nil {
		return 0
	}
	return s.cal.Weight
}

// maybeCalibrate runs the self-check when the catalog changed since the
// last one and has been quiet for CalibrationDelay; otherwise it returns
// how long to wait before asking again (0: nothing to do).
func (s *Store) maybeCalibrate() (time.Duration, error) {
	if s.opts.Weight != nil {
		return 0, nil
	}
	s.mu.RLock()
	gen, done, quiet := s.gen, s.calGen, time.Since(s.lastUpdate)
	var sample []calDoc
	if gen != done && quiet >= s.opts.CalibrationDelay {
		sample = s.calSample()
	}
	s.mu.RUnlock()
	switch {
	case gen == done:
		return 0, nil
	case quiet < s.opts.CalibrationDelay:
		return s.opts.CalibrationDelay - quiet, nil
	}
	cal, err := s.calibrate(sample)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.cal, s.calGen = &cal, gen
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	s.log.Info("embeddings self-check", "weight", cal.Weight, "result", cal.Summary())
	return 0, nil
}

// calSample picks up to CalibrationTools tools, the same ones for the same
// catalog (by a hash of their IDs). Called under the read lock.
func (s *Store) calSample() []calDoc {
	type hashed struct {
		h  uint64
		cd calDoc
	}
	var all []hashed
	for _, cds := range s.calDocs {
		for _, cd := range cds {
			sum := sha256.Sum256([]byte(cd.doc.ID))
			all = append(all, hashed{binary.LittleEndian.Uint64(sum[:8]), cd})
		}
	}
	slices.SortFunc(all, func(a, b hashed) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return strings.Compare(a.cd.doc.ID, b.cd.doc.ID)
	})
	out := make([]calDoc, min(len(all), s.opts.CalibrationTools))
	for i := range out {
		out[i] = all[i].cd
	}
	return out
}

// calibrate embeds the sample's texts and runs index.Calibrate.
func (s *Store) calibrate(sample []calDoc) (index.Calibration, error) {
	var docs []index.Doc
	var queries []index.CalQuery
	for _, cd := range sample {
		docs = append(docs, cd.doc)
		queries = append(queries, cd.queries...)
	}
	texts := make([]string, 0, len(docs)+len(queries))
	for _, d := range docs {
		texts = append(texts, Text(d))
	}
	for _, q := range queries {
		texts = append(texts, q.Text)
	}
	key := s.calKey(texts, queries)
	if v, ok := s.opts.Cache.Get(key); ok {
		if c, ok := decodeCalibration(v, len(docs), len(queries)); ok {
			return c, nil
		}
	}
	vecs, err := s.embedAll(texts)
	if err != nil {
		return index.Calibration{}, err
	}
	dv, qv := vecs[:len(docs)], vecs[len(docs):]
	cix := index.NewWithConfig(s.opts.Index)
	byProv := map[string][]index.Doc{}
	var order []string
	for _, d := range docs {
		if _, ok := byProv[d.Provider]; !ok {
			order = append(order, d.Provider)
		}
		byProv[d.Provider] = append(byProv[d.Provider], d)
	}
	for _, p := range order {
		cix.Replace(p, byProv[p])
	}
	vdocs := make([]vdoc, len(docs))
	for i, d := range docs {
		vdocs[i] = vdoc{id: d.ID, kind: d.Kind, provider: d.Provider, vec: dv[i]}
	}
	model := func(i, k int) []index.Hit {
		top := topK{k: k}
		for j := range vdocs {
			if len(vdocs[j].vec) == len(qv[i]) {
				top.offer(&vdocs[j], dot(qv[i], vdocs[j].vec))
			}
		}
		return top.hits()
	}
	c := cix.Calibrate(queries, model, nil)
	if err := s.opts.Cache.Put(key, encodeCalibration(c)); err != nil {
		s.log.Warn("embeddings: self-check not cached", "err", err)
	}
	return c, nil
}

// embedAll returns the unit vectors of texts, from the cache or the
// endpoint (in batches, each under BatchTimeout), caching what it embeds.
func (s *Store) embedAll(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []int
	for i, t := range texts {
		if v, ok := s.opts.Cache.Get(KeyOf(s.opts.Model, t)); ok {
			out[i] = unit(v)
		} else {
			missing = append(missing, i)
		}
	}
	for len(missing) > 0 {
		n := min(len(missing), s.opts.BatchSize)
		batch := make([]string, n)
		for j, i := range missing[:n] {
			batch[j] = texts[i]
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.BatchTimeout)
		vecs, err := s.emb.Embed(ctx, batch)
		cancel()
		if err != nil {
			return nil, err
		}
		if len(vecs) != n {
			return nil, fmt.Errorf("embeddings: %d vectors for %d texts", len(vecs), n)
		}
		s.health.ok()
		for j, i := range missing[:n] {
			if err := s.opts.Cache.Put(KeyOf(s.opts.Model, texts[i]), vecs[j]); err != nil {
				s.health.failed(err)
			}
			out[i] = unit(vecs[j])
		}
		missing = missing[n:]
	}
	return out, nil
}

// calKey is the cache key of a self-check's outcome: the version, the
// fusion settings, every text and every query's target.
func (s *Store) calKey(texts []string, queries []index.CalQuery) Key {
	var b strings.Builder
	cfg := s.opts.Index
	fmt.Fprintf(&b, "%s\x00%s\x00%g\x00%d\x00%v\x00", calVersion, cfg.SemanticFusion, cfg.SemanticRRFK, cfg.SemanticDepth, index.CalibrationWeights)
	for _, t := range texts {
		sum := sha256.Sum256([]byte(t))
		b.Write(sum[:])
	}
	for _, q := range queries {
		b.WriteString(q.Target)
		b.WriteByte(0)
	}
	return KeyOf(s.opts.Model, b.String())
}

// encodeCalibration packs an outcome as a "vector" for the cache: docs,
// queries, weight, the lexical and model figures, then weight and figures
// per weight tried.
func encodeCalibration(c index.Calibration) []float32 {
	v := []float32{float32(c.Docs), float32(c.Queries), float32(c.Weight),
		float32(c.Lexical.R1), float32(c.Lexical.R5), float32(c.Lexical.MRR),
		float32(c.Model.R1), float32(c.Model.R5), float32(c.Model.MRR)}
	for _, f := range c.Fused {
		v = append(v, float32(f.Weight), float32(f.R1), float32(f.R5), float32(f.MRR))
	}
	return v
}

func decodeCalibration(v []float32, docs, queries int) (index.Calibration, bool) {
	if len(v) < 9 || (len(v)-9)%4 != 0 || int(v[0]) != docs || int(v[1]) != queries {
		return index.Calibration{}, false
	}
	f := func(x float32) float64 { return math.Round(float64(x)*1e6) / 1e6 }
	c := index.Calibration{Docs: docs, Queries: queries, Weight: f(v[2]),
		Lexical: index.Figures{R1: f(v[3]), R5: f(v[4]), MRR: f(v[5])},
		Model:   index.Figures{R1: f(v[6]), R5: f(v[7]), MRR: f(v[8])}}
	for i := 9; i < len(v); i += 4 {
		c.Fused = append(c.Fused, index.WeightFigures{Weight: f(v[i]), Figures: index.Figures{R1: f(v[i+1]), R5: f(v[i+2]), MRR: f(v[i+3])}})
	}
	return c, true
}
