package policy

import (
	"bytes"
	"encoding/base64"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/state"
)

func TestTokens(t *testing.T) {
	key := bytes.Repeat([]byte("k"), 32)
	shared := state.NewMemory()
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	a, b := NewTokensWithKey(key, shared), NewTokensWithKey(key, shared)
	a.Now, b.Now = clock, clock
	other := NewTokensWithKey(bytes.Repeat([]byte("x"), 32), shared)
	other.Now = clock

	tok := a.Issue("call-1")
	if !strings.HasPrefix(tok, "ct_") {
		t.Fatalf("token %q", tok)
	}
	tests := []struct {
		name string
		book *Tokens
		tok  string
		key  string
		want bool
	}{
		{"other call", b, tok, "call-2", false},
		{"other key", other, tok, "call-1", false},
		{"garbage", b, "ct_!!!", "call-1", false},
		{"no prefix", b, strings.TrimPrefix(tok, "ct_"), "call-1", false},
		{"another replica redeems", b, tok, "call-1", true},
		{"second use anywhere", a, tok, "call-1", false},
	}
	for _, tt := range tests {
		if got := tt.book.Redeem(tt.tok, tt.key); got != tt.want {
			t.Errorf("%s: Redeem = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Tampering with any byte breaks the MAC.
	t2 := a.Issue("call-3")
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(t2, "ct_"))
	for i := range raw {
		bad := bytes.Clone(raw)
		bad[i] ^= 1
		if a.Redeem("ct_"+base64.RawURLEncoding.EncodeToString(bad), "call-3") {
			t.Fatalf("tampered byte %d accepted", i)
		}
	}
	// Expiry.
	t3 := a.Issue("call-4")
	now = now.Add(a.TTL + time.Second)
	if b.Redeem(t3, "call-4") {
		t.Error("expired token accepted")
	}
}

func TestTokensSingleUseConcurrent(t *testing.T) {
	key := bytes.Repeat([]byte("k"), 32)
	store := state.NewMemory()
	books := []*Tokens{NewTokensWithKey(key, store), NewTokensWithKey(key, store), NewTokensWithKey(key, store)}
	tok := books[0].Issue("c")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if books[i%3].Redeem(tok, "c") {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d redemptions, want 1", wins.Load())
	}
}

func FuzzRedeem(f *testing.F) {
	book := NewTokens()
	f.Add(book.Issue("k"), "k")
	f.Add("ct_", "")
	f.Add("ct_AAAA", "k")
	f.Fuzz(func(t *testing.T, tok, key string) {
		if len(tok) > 256 {
			return
		}
		if book.Redeem(tok, key) && !strings.HasPrefix(tok, "ct_") {
			t.Fatalf("accepted %q", tok)
		}
	})
}
