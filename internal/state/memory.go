package state

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"
)

// Memory is a Store in this process's memory. It is bounded: past MaxKeys,
// expired entries are dropped first, then the entries closest to expiry.
type Memory struct {
	// MaxKeys bounds the number of entries (0 = DefaultMaxKeys).
	MaxKeys int
	// Now is the clock (nil = time.Now).
	Now func() time.Time

	mu sync.Mutex
	m  map[string]*entry

	bus memoryBus
}

// DefaultMaxKeys bounds a Memory store when MaxKeys is zero.
const DefaultMaxKeys = 100000

type entry struct {
	n       int64
	value   []byte
	tokens  float64 // token bucket
	stamp   time.Time
	expires time.Time // zero: never
}

var _ Store = (*Memory)(nil)
var _ Reporter = (*Memory)(nil)
var _ Bus = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{} }

// Status implements Reporter.
func (m *Memory) Status() Status { return Status{Backend: "memory"} }

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// live returns key's entry if it has not expired (m.mu held).
func (m *Memory) live(key string, now time.Time) *entry {
	e := m.m[key]
	if e == nil {
		return nil
	}
	if !e.expires.IsZero() && !now.Before(e.expires) {
		delete(m.m, key)
		return nil
	}
	return e
}

// add inserts a fresh entry, making room first (m.mu held).
func (m *Memory) add(key string, now time.Time) *entry {
	if m.m == nil {
		m.m = map[string]*entry{}
	}
	max := m.MaxKeys
	if max <= 0 {
		max = DefaultMaxKeys
	}
	if len(m.m) >= max {
		m.evict(now, max)
	}
	e := &entry{}
	m.m[key] = e
	return e
}

func (m *Memory) evict(now time.Time, max int) {
	var soonest string
	var soonestAt time.Time
	for k, e := range m.m {
		if !e.expires.IsZero() && !now.Before(e.expires) {
			delete(m.m, k)
			continue
		}
		if soonest == "" || (!e.expires.IsZero() && e.expires.Before(soonestAt)) {
			soonest, soonestAt = k, e.expires
		}
	}
	if len(m.m) >= max && soonest != "" {
		delete(m.m, soonest)
	}
}

func expiry(now time.Time, ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return now.Add(ttl)
}

// Incr implements Store.
func (m *Memory) Incr(_ context.Context, key string, ttl time.Duration) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	e := m.live(key, now)
	if e == nil {
		e = m.add(key, now)
	}
	e.n++
	e.expires = expiry(now, ttl)
	return e.n, nil
}

// Count implements Store.
func (m *Memory) Count(_ context.Context, key string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.live(key, m.now()); e != nil {
		return e.n, nil
	}
	return 0, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, keys ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.m, k)
	}
	return nil
}

// Once implements Store.
func (m *Memory) Once(_ context.Context, key string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.live(key, now) != nil {
		return false, nil
	}
	e := m.add(key, now)
	e.n = 1
	e.expires = expiry(now, ttl)
	return true, nil
}

// Claim implements Store.
func (m *Memory) Claim(_ context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.live(key, now) != nil {
		return false, nil
	}
	e := m.add(key, now)
	e.value = append([]byte{}, value...) // never nil: Get tells a claim from a counter by it
	e.expires = expiry(now, ttl)
	return true, nil
}

// Take implements Store.
func (m *Memory) Take(_ context.Context, key string, rate float64, burst int) (bool, time.Duration, error) {
	if rate <= 0 {
		return true, 0, nil
	}
	if burst < 1 {
		burst = 1
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	e := m.live(key, now)
	if e == nil {
		e = m.add(key, now)
		e.tokens, e.stamp = float64(burst), now
	}
	e.tokens = math.Min(float64(burst), e.tokens+now.Sub(e.stamp).Seconds()*rate)
	e.stamp = now
	// An idle bucket is full again after burst/rate: drop it then.
	e.expires = now.Add(time.Duration(float64(burst) / rate * float64(time.Second)))
	if e.tokens >= 1 {
		e.tokens--
		return true, 0, nil
	}
	wait := time.Duration((1 - e.tokens) / rate * float64(time.Second))
	return false, wait, nil
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, key string, value []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	e := m.live(key, now)
	if e == nil {
		e = m.add(key, now)
	}
	e.value = append([]byte(nil), value...)
	e.expires = expiry(now, ttl)
	return nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.live(key, m.now()); e != nil && e.value != nil {
		return append([]byte(nil), e.value...), nil
	}
	return nil, ErrNotFound
}

// Scan implements Store.
func (m *Memory) Scan(_ context.Context, prefix string) (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	out := map[string][]byte{}
	for k := range m.m {
		if strings.HasPrefix(k, prefix) {
			if e := m.live(k, now); e != nil && e.value != nil {
				out[k] = append([]byte(nil), e.value...)
			}
		}
	}
	return out, nil
}

// memoryBus is Memory's Bus: the listeners of this process.
type memoryBus struct {
	mu        sync.Mutex
	listeners map[string]map[*memoryListener]bool
}

type memoryListener struct{ ch chan string }

// Publish implements Bus: every listener of topic in this process gets msg
// (a listener that is behind by 64 messages misses it).
func (m *Memory) Publish(_ context.Context, topic, msg string) error {
	m.bus.mu.Lock()
	defer m.bus.mu.Unlock()
	for l := range m.bus.listeners[topic] {
		select {
		case l.ch <- msg:
		default:
		}
	}
	return nil
}

// Listen implements Bus.
func (m *Memory) Listen(ctx context.Context, topic string, f func(msg string)) {
	l := &memoryListener{ch: make(chan string, 64)}
	m.bus.mu.Lock()
	if m.bus.listeners == nil {
		m.bus.listeners = map[string]map[*memoryListener]bool{}
	}
	if m.bus.listeners[topic] == nil {
		m.bus.listeners[topic] = map[*memoryListener]bool{}
	}
	m.bus.listeners[topic][l] = true
	m.bus.mu.Unlock()
	go func() {
		defer func() {
			m.bus.mu.Lock()
			delete(m.bus.listeners[topic], l)
			m.bus.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case msg := <-l.ch:
				f(msg)
			}
		}
	}()
}
