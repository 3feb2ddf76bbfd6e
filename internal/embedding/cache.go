package embedding

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
)

// Key identifies an embedded text under one model: sha256(model NUL text).
type Key [sha256.Size]byte

// KeyOf returns the cache key of text embedded by model.
func KeyOf(model, text string) Key {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var k Key
	h.Sum(k[:0])
	return k
}

// The cache file: a magic line, then records of key (32 bytes), dimension
// (uint32 LE), the vector (float32 LE) and a CRC-32 of all of it. A torn or
// corrupt tail (a crash while appending) is cut off at load.
const cacheMagic = "agent-tools vectors v1\n"

// maxDim bounds a record's dimension (the largest models use ~4k).
const maxDim = 1 << 16

// Cache is an append-only on-disk map from Key to vector, held in memory.
type Cache struct {
	mu   sync.RWMutex
	vecs map[Key][]float32
	f    *os.File // nil: memory only
}

// OpenCache loads (or creates) the cache file at path; path "" keeps the
// cache in memory only.
func OpenCache(path string) (*Cache, error) {
	c := &Cache{vecs: map[Key][]float32{}}
	if path == "" {
		return c, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	// O_APPEND: two stores over one file (a config reload) never write
	// over each other's records.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	good, err := readRecords(bufio.NewReader(f), func(k Key, v []float32) { c.vecs[k] = v })
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("vector cache %s: %w", path, err)
	}
	if good == 0 { // new or unreadable header: start afresh
		c.vecs = map[Key][]float32{}
		err = f.Truncate(0)
		if err == nil {
			_, err = f.Write([]byte(cacheMagic))
		}
	} else {
		err = f.Truncate(good) // cut a torn tail
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	c.f = f
	return c, nil
}

// readRecords calls fn for every intact record and returns the offset just
// past the last one (0 when the header is missing or wrong).
func readRecords(r io.Reader, fn func(Key, []float32)) (int64, error) {
	head := make([]byte, len(cacheMagic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != cacheMagic {
		return 0, nil
	}
	off := int64(len(cacheMagic))
	var hdr [sha256.Size + 4]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return off, nil // end, or a torn record
		}
		dim := binary.LittleEndian.Uint32(hdr[sha256.Size:])
		if dim == 0 || dim > maxDim {
			return off, nil
		}
		body := make([]byte, 4*int(dim)+4)
		if _, err := io.ReadFull(r, body); err != nil {
			return off, nil
		}
		crc := crc32.NewIEEE()
		crc.Write(hdr[:])
		crc.Write(body[:len(body)-4])
		if crc.Sum32() != binary.LittleEndian.Uint32(body[len(body)-4:]) {
			return off, nil
		}
		var k Key
		copy(k[:], hdr[:sha256.Size])
		v := make([]float32, dim)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:]))
		}
		fn(k, v)
		off += int64(len(hdr) + len(body))
	}
}

// encodeRecord is one record's bytes.
func encodeRecord(k Key, v []float32) []byte {
	b := make([]byte, 0, sha256.Size+4+4*len(v)+4)
	b = append(b, k[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// Get returns the vector of k.
func (c *Cache) Get(k Key) ([]float32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.vecs[k]
	return v, ok
}

// Len returns the number of cached vectors.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.vecs)
}

// Put stores v under k, appending it to the file.
func (c *Cache) Put(k Key, v []float32) error {
	if len(v) == 0 || len(v) > maxDim {
		return errors.New("vector cache: bad vector length")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.vecs[k]; ok {
		return nil
	}
	c.vecs[k] = v
	if c.f == nil {
		return nil
	}
	if _, err := c.f.Write(encodeRecord(k, v)); err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	return nil
}

// Close closes the file.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}
