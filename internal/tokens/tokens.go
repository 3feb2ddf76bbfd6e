// Package tokens counts the tokens a model reads in a text: o200k_base,
// the BPE of OpenAI's current models, run offline in process (the ranks
// embedded by github.com/pkoukk/tiktoken-go-loader, the pre-tokenizer
// written out in o200k.go, checked against tiktoken-go). It is the one
// counting function: the audit's result_tokens, the result-token
// histogram, the console's totals and the quotas' token windows all use
// Count.
//
// A text longer than MaxExact bytes is not run through the BPE: it is
// estimated as ceil(characters/4) and Count says so, which bounds the cost
// a call's result can add to the call (docs/observability.md gives the
// measured figures). The BPE's tables are loaded by Warm or the first
// Count, not at start, so a process that counts nothing pays nothing;
// until they are loaded, Count estimates rather than wait.
package tokens

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the BPE Count runs.
const Encoding = "o200k_base"

// MaxExact is the longest text, in bytes, Count runs through the BPE;
// longer texts are estimated (Estimate). Counting runs at about 40 MB/s
// on one core (BenchmarkCount1KB), so MaxExact bounds what counting adds
// to a call to under a millisecond.
const MaxExact = 32 << 10

var (
	once   sync.Once
	loaded = make(chan struct{}) // closed once load has run
	ranks  atomic.Pointer[map[string]int]
)

func load() {
	defer close(loaded)
	r, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(Encoding + ".tiktoken")
	if err != nil || len(r) == 0 { // embedded data: only a broken build gets here
		slog.Warn("tokens: o200k_base unavailable, counting characters/4", "err", err)
		return
	}
	ranks.Store(&r)
}

// Warm starts loading the BPE's ranks in the background (about 0.3 s of
// one core and 20 MB of heap) and returns at once; serve calls it at
// start, so that its first calls are counted exactly.
func Warm() { go once.Do(load) }

// Load loads the BPE's ranks and returns when they are loaded (tests, and
// callers that would rather wait than estimate).
func Load() {
	once.Do(load)
	<-loaded
}

// Count is the o200k_base token count of s. It never waits: when s is
// longer than MaxExact bytes, or the BPE's ranks are not loaded yet (the
// first Count starts loading them, as Warm does), it is Estimate(s) with
// estimated set.
func Count(s string) (n int, estimated bool) {
	if s == "" {
		return 0, false
	}
	if len(s) > MaxExact {
		return Estimate(s), true
	}
	r := ranks.Load()
	if r == nil {
		Warm()
		return Estimate(s), true
	}
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // as tiktoken-go: each invalid byte is U+FFFD
	}
	var parts [][2]int
	pieces(s, func(p string) {
		if len(p)+1 > cap(parts) {
			parts = make([][2]int, 0, len(p)+1)
		}
		n += bpe(p, *r, parts)
	})
	return n, false
}

// Estimate is ceil(characters/4), the usual rule of thumb for English
// text and JSON under o200k_base.
func Estimate(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}
