package embedding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/index"
)

// Embedder turns texts into vectors (Client, an endpoint; localmodel.Model,
// a model folder in process; fakes in tests).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Options configure a Store.
type Options struct {
	Model        string        // part of every cache key
	Cache        *Cache        // nil: memory only
	QueryTimeout time.Duration // per-query deadline (default 400ms)
	BatchTimeout time.Duration // deadline of one batch of tool texts (default 60s)
	BatchSize    int           // tool texts per request (default 64)
	Logger       *slog.Logger

	// Weight, when set (index.semantic.weight), is the fusion weight used
	// as it is: no self-check. Unset, the store measures the model on the
	// catalog (index.Calibrate) once its tools are embedded, and the index
	// fuses at the weight chosen; until then, and when the check finds the
	// model no help, the ranking is lexical alone.
	Weight *float64
	// Index is the ranking configuration the self-check fuses with (the
	// index's own; zero: index.DefaultConfig).
	Index index.Config
	// CalibrationTools bounds the tools the self-check samples (default
	// 400); CalibrationDelay is how long the catalog must stay unchanged
	// before it runs (default 500ms).
	CalibrationTools int
	CalibrationDelay time.Duration
	// SharedCache: Close leaves Cache open (the caller shares it between
	// stores and closes it).
	SharedCache bool
}

// Store is the semantic stage of the index (index.Semantic): it keeps a
// vector per tool, filled in the background from the cache and the
// endpoint, and ranks tools by cosine similarity to the embedded query.
type Store struct {
	emb  Embedder
	opts Options
	log  *slog.Logger

	mu      sync.RWMutex
	docs    map[string][]vdoc // provider → its documents
	pending map[Key]string    // keys to embed → their text
	queries map[string][]float32

	// The self-check (calibrate.go): each provider's calibration documents,
	// the catalog's generation (every Update), the generation last checked
	// and its outcome.
	calDocs    map[string][]calDoc
	gen        uint64
	calGen     uint64
	lastUpdate time.Time
	cal        *index.Calibration

	health  health
	changed chan struct{} // closed and renewed whenever vectors are stored

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

var _ index.Semantic = (*Store)(nil)

type vdoc struct {
	id, kind, provider string
	key                Key
	vec                []float32 // unit length; nil until embedded
}

// NewStore starts a store over emb; Close stops its background filling.
func NewStore(emb Embedder, o Options) *Store {
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = 400 * time.Millisecond
	}
	if o.BatchTimeout <= 0 {
		o.BatchTimeout = time.Minute
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 64
	}
	if o.Cache == nil {
		o.Cache, _ = OpenCache("")
	}
	if o.Index.K1 == 0 {
		o.Index = index.DefaultConfig()
	}
	if o.CalibrationTools <= 0 {
		o.CalibrationTools = 400
	}
	if o.CalibrationDelay <= 0 {
		o.CalibrationDelay = 500 * time.Millisecond
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Store{emb: emb, opts: o, log: log, docs: map[string][]vdoc{}, pending: map[Key]string{}, queries: map[string][]float32{}, calDocs: map[string][]calDoc{},
		wake: make(chan struct{}, 1), changed: make(chan struct{}), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	s.health.log = log
	go s.fill()
	return s
}

// Text is what a tool is embedded as: its provider, name, description and
// parameter names.
func Text(d index.Doc) string {
	var b strings.Builder
	b.WriteString(d.Name)
	if d.Description != "" {
		b.WriteString(": ")
		b.WriteString(d.Description)
	}
	if len(d.Params) > 0 {
		b.WriteString(" Parameters:")
		for _, p := range d.Params {
			b.WriteString(" " + p.Name)
		}
		b.WriteByte('.')
	}
	if d.ProviderDescription != "" {
		b.WriteString(" (" + d.Provider + ": " + d.ProviderDescription + ")")
	}
	return b.String()
}

// Update implements index.Semantic: vectors come from the cache at once,
// the others are queued for the background filler.
func (s *Store) Update(provider string, docs []index.Doc) {
	vs := make([]vdoc, 0, len(docs))
	cds := make([]calDoc, 0, len(docs))
	queued := false
	s.mu.Lock()
	for _, d := range docs {
		if s.opts.Weight == nil {
			r, qs := index.CalibrationDocs(d)
			cds = append(cds, calDoc{doc: r, queries: qs})
		}
		kind := d.Kind
		if kind == "" {
			kind = "tool"
		}
		text := Text(d)
		k := KeyOf(s.opts.Model, text)
		v, ok := s.opts.Cache.Get(k)
		if ok {
			v = unit(v)
		} else {
			s.pending[k] = text
			queued = true
		}
		vs = append(vs, vdoc{id: d.ID, kind: kind, provider: provider, key: k, vec: v})
	}
	if len(vs) == 0 {
		delete(s.docs, provider)
		delete(s.calDocs, provider)
	} else {
		s.docs[provider] = vs
		s.calDocs[provider] = cds
	}
	s.gen++
	s.lastUpdate = time.Now()
	s.mu.Unlock()
	if !queued && s.opts.Weight == nil {
		queued = true // the filler runs the self-check
	}
	if queued {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// fill embeds the pending texts in batches, backing off after failures.
func (s *Store) fill() {
	defer close(s.done)
	backoff := time.Second
	for {
		batch := s.nextBatch()
		if len(batch) == 0 {
			wait, err := s.maybeCalibrate()
			if err != nil {
				if s.ctx.Err() != nil {
					return
				}
				s.health.failed(err)
				wait = backoff
				backoff = min(2*backoff, 5*time.Minute)
			} else if wait == 0 {
				backoff = time.Second
			}
			var timer <-chan time.Time
			if wait > 0 {
				timer = time.After(wait)
			}
			select {
			case <-s.ctx.Done():
				return
			case <-s.wake:
			case <-timer:
			}
			continue
		}
		texts := make([]string, len(batch))
		for i, b := range batch {
			texts[i] = b.text
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.BatchTimeout)
		vecs, err := s.emb.Embed(ctx, texts)
		cancel()
		if s.ctx.Err() != nil {
			return
		}
		if err != nil {
			s.health.failed(err)
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Minute)
			continue
		}
		backoff = time.Second
		s.health.ok()
		s.store(batch, vecs)
	}
}

type pendingText struct {
	key  Key
	text string
}

func (s *Store) nextBatch() []pendingText {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []pendingText
	for k, t := range s.pending {
		out = append(out, pendingText{k, t})
	}
	// Deterministic order (map iteration is not), then one batch.
	slices.SortFunc(out, func(a, b pendingText) int { return strings.Compare(a.text, b.text) })
	return out[:min(len(out), s.opts.BatchSize)]
}

func (s *Store) store(batch []pendingText, vecs [][]float32) {
	got := map[Key][]float32{}
	for i, b := range batch {
		if err := s.opts.Cache.Put(b.key, vecs[i]); err != nil {
			s.health.failed(err)
		}
		got[b.key] = unit(vecs[i])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
	for k := range got {
		delete(s.pending, k)
	}
	for p, ds := range s.docs {
		for i := range ds {
			if v, ok := got[ds[i].key]; ok {
				s.docs[p][i].vec = v
			}
		}
	}
}

// Sync waits until every tool text handed to Update has a vector and the
// self-check of the catalog has run (unless Options.Weight is set), or ctx
// ends (the endpoint may be down).
func (s *Store) Sync(ctx context.Context) error {
	for {
		s.mu.RLock()
		n, ch := len(s.pending), s.changed
		checked := s.opts.Weight != nil || s.calGen == s.gen
		s.mu.RUnlock()
		if n == 0 && checked {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// ErrNotReady: no tool has a vector yet (the filler is still working or
// the endpoint is down).
var ErrNotReady = errors.New("embeddings: no tool vectors yet")

// maxQueryCache bounds the cached query vectors.
const maxQueryCache = 512

// Similar implements index.Semantic: the query is embedded under
// QueryTimeout (or taken from the query cache) and compared with every tool
// vector. Errors mean "lexical only" to the index.
func (s *Store) Similar(query string, o index.Options, k int) ([]index.Hit, error) {
	if !s.anyVector() {
		return nil, ErrNotReady
	}
	qv, err := s.queryVector(query)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	top := topK{k: k}
	for p, ds := range s.docs {
		if o.Provider != "" && p != o.Provider {
			continue
		}
		for i := range ds {
			d := &ds[i]
			if d.vec == nil || (o.Kind != "" && d.kind != o.Kind) || len(d.vec) != len(qv) {
				continue
			}
			top.offer(d, dot(qv, d.vec))
		}
	}
	return top.hits(), nil
}

// topK keeps the k best-scoring documents (ties by ID).
type topK struct {
	k     int
	items []scoredDoc // sorted best first
}

type scoredDoc struct {
	d     *vdoc
	score float64
}

func (t *topK) offer(d *vdoc, score float64) {
	if t.k <= 0 {
		return
	}
	better := func(a scoredDoc) bool { return score > a.score || (score == a.score && d.id < a.d.id) }
	if len(t.items) == t.k && !better(t.items[len(t.items)-1]) {
		return // the common case: one comparison
	}
	i := sort.Search(len(t.items), func(i int) bool { return better(t.items[i]) })
	if len(t.items) < t.k {
		t.items = append(t.items, scoredDoc{})
	}
	copy(t.items[i+1:], t.items[i:len(t.items)-1])
	t.items[i] = scoredDoc{d, score}
}

func (t *topK) hits() []index.Hit {
	out := make([]index.Hit, len(t.items))
	for i, it := range t.items {
		out[i] = index.Hit{ID: it.d.id, Kind: it.d.kind, Provider: it.d.provider, Score: it.score}
	}
	return out
}

func (s *Store) anyVector() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, ds := range s.docs {
		for _, d := range ds {
			if d.vec != nil {
				return true
			}
		}
	}
	return false
}

func (s *Store) queryVector(q string) ([]float32, error) {
	s.mu.RLock()
	v, ok := s.queries[q]
	s.mu.RUnlock()
	if ok {
		return v, nil
	}
	if err := s.health.open(); err != nil {
		return nil, err // failing: do not make every search wait for the deadline
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.QueryTimeout)
	defer cancel()
	vecs, err := s.emb.Embed(ctx, []string{q})
	if err != nil {
		s.health.failed(err)
		return nil, err
	}
	s.health.ok()
	v = unit(vecs[0])
	s.mu.Lock()
	if len(s.queries) >= maxQueryCache {
		clear(s.queries)
	}
	s.queries[q] = v
	s.mu.Unlock()
	return v, nil
}

// Status is the stage's state for doctor and runtime_status.
type Status struct {
	Docs, Vectors int
	Degraded      bool   // the last call failed: searches are lexical
	LastError     string // why (no credentials: see Client)

	// Weight is the fusion weight searches use (0: lexical alone), and
	// WeightFrom why: WeightConfig, WeightSelfCheck or WeightPending.
	Weight     float64
	WeightFrom string
	// SelfCheck is the last self-check's outcome (nil: none yet, or the
	// weight is configured).
	SelfCheck *index.Calibration
}

// Where the fusion weight comes from (Status.WeightFrom).
const (
	WeightConfig    = "index.semantic.weight"
	WeightSelfCheck = "self-check"
	WeightPending   = "self-check pending"
)

// Status reports how many tools have vectors and whether the endpoint works.
func (s *Store) Status() Status {
	s.mu.RLock()
	var st Status
	for _, ds := range s.docs {
		for _, d := range ds {
			st.Docs++
			if d.vec != nil {
				st.Vectors++
			}
		}
	}
	switch {
	case s.opts.Weight != nil:
		st.Weight, st.WeightFrom = *s.opts.Weight, WeightConfig
	case s.cal != nil:
		c := *s.cal
		st.Weight, st.WeightFrom, st.SelfCheck = c.Weight, WeightSelfCheck, &c
	default:
		st.WeightFrom = WeightPending
	}
	s.mu.RUnlock()
	st.Degraded, st.LastError = s.health.state()
	return st
}

// Close stops the background filler and closes the cache.
func (s *Store) Close() error {
	s.cancel()
	<-s.done
	if s.opts.SharedCache {
		return nil
	}
	return s.opts.Cache.Close()
}

// health logs the first failure of a run of failures, and the recovery.
// While degraded, queries try the endpoint again only every retryEvery.
type health struct {
	log      *slog.Logger
	mu       sync.Mutex
	degraded bool
	lastErr  string
	retryAt  time.Time
}

// retryEvery is how often a query tries a failing endpoint again.
const retryEvery = 30 * time.Second

// ErrDegraded: the endpoint failed recently; the query is not embedded.
var ErrDegraded = errors.New("embeddings: endpoint failing, lexical ranking")

// open reports whether a query may call the endpoint now.
func (h *health) open() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.degraded && time.Now().Before(h.retryAt) {
		return ErrDegraded
	}
	if h.degraded {
		h.retryAt = time.Now().Add(retryEvery) // one query probes; the others stay lexical
	}
	return nil
}

func (h *health) failed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastErr = err.Error()
	h.retryAt = time.Now().Add(retryEvery)
	if !h.degraded {
		h.degraded = true
		h.log.Warn("embeddings unavailable: ranking tools lexically until they work again", "err", h.lastErr)
	}
}

func (h *health) ok() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.degraded {
		h.degraded = false
		h.log.Info("embeddings available again")
	}
}

func (h *health) state() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.degraded, h.lastErr
}

// Diagnose is doctor's line for the stage: "ok" with the vector count, or
// "warning" with the reason searches are lexical.
func (s *Store) Diagnose() (status, reason string) {
	st := s.Status()
	switch {
	case st.Degraded:
		return "warning", fmt.Sprintf("embeddings unavailable, searches are lexical: %s", st.LastError)
	case st.Vectors < st.Docs:
		return "ok", fmt.Sprintf("embeddings: %d of %d tools embedded so far (searches are lexical until the self-check has run)", st.Vectors, st.Docs)
	}
	return "ok", fmt.Sprintf("embeddings: %d tools embedded; %s", st.Vectors, st.weightLine())
}

// weightLine says which fusion weight searches use and why.
func (st Status) weightLine() string {
	switch st.WeightFrom {
	case WeightConfig:
		return fmt.Sprintf("fusion weight %g (index.semantic.weight; no self-check)", st.Weight)
	case WeightSelfCheck:
		return st.SelfCheck.Summary()
	}
	return "self-check pending: searches are lexical until it has run"
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// dot is the inner product of two vectors of one length, four lanes at a
// time.
func dot(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64((s0 + s1) + (s2 + s3))
}
