package registry

import (
	"sync"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/index"
)

// indexer keeps the search index in step with the catalog off the caller's
// path. Building a provider's segment (and extracting its tools' parameters
// from their schemas) is the costly part of installing a tool list: at
// 10,000 tools it was most of a warm start's CPU, and nothing but a search
// needs it. So the registry's write paths only enqueue a provider's new
// documents (a snapshot of immutable slices); a goroutine applies them in
// order, and a Search waits until every update enqueued before it began is
// applied. A search therefore never sees a partial or stale catalog: it sees
// at least everything installed before it was asked, exactly as when the
// index was updated under the registry's lock.
//
// Updates of one provider coalesce (each one replaces the provider's whole
// segment, so only the last matters); providers keep the order of their
// first pending update. The goroutine exists only while there is work, so
// an idle registry holds none.
type indexer struct {
	ix *index.Index

	mu      sync.Mutex
	idle    sync.Cond // broadcast whenever applied advances
	order   []string  // providers with a pending update, in first-enqueued order
	pending map[string]indexUpdate
	queued  uint64 // updates enqueued so far
	applied uint64 // the index reflects every update up to this count
	running bool   // a goroutine is applying updates
}

// indexUpdate is one provider's documents to be: its tools and skills, or
// its removal (a provider switched off). The slices are never modified once installed: the
// registry replaces them, so the worker may read them without its lock.
type indexUpdate struct {
	info   catalog.ProviderInfo
	tools  []catalog.Tool
	skills []catalog.Skill
	remove bool
}

func newIndexer(ix *index.Index) *indexer {
	q := &indexer{ix: ix, pending: map[string]indexUpdate{}}
	q.idle.L = &q.mu
	return q
}

// replace enqueues a provider's tools and skills.
func (q *indexer) replace(info catalog.ProviderInfo, tools []catalog.Tool, skills []catalog.Skill) {
	q.enqueue(indexUpdate{info: info, tools: tools, skills: skills})
}

// remove enqueues a provider's removal.
func (q *indexer) remove(id string) {
	q.enqueue(indexUpdate{info: catalog.ProviderInfo{ID: id}, remove: true})
}

func (q *indexer) enqueue(u indexUpdate) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.pending[u.info.ID]; !ok {
		q.order = append(q.order, u.info.ID)
	}
	q.pending[u.info.ID] = u
	q.queued++
	if !q.running {
		q.running = true
		go q.run()
	}
}

// run applies pending updates until there are none.
func (q *indexer) run() {
	q.mu.Lock()
	for len(q.order) > 0 {
		order, pending, upto := q.order, q.pending, q.queued
		q.order, q.pending = nil, map[string]indexUpdate{}
		q.mu.Unlock()
		for _, id := range order {
			u := pending[id]
			if u.remove {
				q.ix.Remove(id)
			} else {
				q.ix.Replace(id, docs(u.info, u.tools, u.skills))
			}
		}
		q.mu.Lock()
		q.applied = upto
		q.idle.Broadcast()
	}
	q.running = false
	q.mu.Unlock()
}

// wait returns once every update enqueued before the call is applied.
func (q *indexer) wait() {
	q.mu.Lock()
	for target := q.queued; q.applied < target; {
		q.idle.Wait()
	}
	q.mu.Unlock()
}
