package resultcache

import (
	"container/list"
	"sync"
	"time"
)

// lru is a byte-bounded least-recently-used map with per-entry expiry.
// github.com/hashicorp/golang-lru/v2 bounds by count (a byte bound would
// need our own accounting through its eviction callback anyway) and its
// expirable variant reads the wall clock; this is the ~60 lines the cache
// needs, on container/list, with the cache's own clock.
type lru struct {
	mu    sync.Mutex
	max   int64
	used  int64
	ll    *list.List // front: most recently used
	items map[string]*list.Element
}

type lruEntry struct {
	key     string
	val     []byte
	expires time.Time
}

// entryOverhead approximates what an entry costs beyond its key and value
// (list element, map slot, headers), so that many tiny entries still count.
const entryOverhead = 96

func newLRU(max int64) *lru {
	return &lru{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

func size(key string, val []byte) int64 { return int64(len(key)+len(val)) + entryOverhead }

func (c *lru) get(key string, now time.Time) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*lruEntry)
	if !now.Before(e.expires) {
		c.removeLocked(el)
		return nil, false
	}
	c.ll.MoveToFront(el)
	return e.val, true
}

// put stores val (which the caller no longer changes) and evicts the least
// recently used entries until the bound holds. An entry larger than the
// whole bound is not kept.
func (c *lru) put(key string, val []byte, expires time.Time) {
	n := size(key, val)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.removeLocked(el)
	}
	if n > c.max {
		return
	}
	c.items[key] = c.ll.PushFront(&lruEntry{key: key, val: val, expires: expires})
	c.used += n
	for c.used > c.max {
		c.removeLocked(c.ll.Back())
	}
}

func (c *lru) removeLocked(el *list.Element) {
	e := c.ll.Remove(el).(*lruEntry)
	delete(c.items, e.key)
	c.used -= size(e.key, e.val)
}

// stats returns the entries kept and the bytes they are counted as.
func (c *lru) stats() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.used
}
