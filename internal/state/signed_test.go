package state

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// A sealed value reads back under its key only, and a value that does not
// verify — plain, altered, moved to another key, sealed under another key
// — is absent to Get and Scan, logged once per value naming the key only.
func TestSignedRefusesWhatDoesNotVerify(t *testing.T) {
	ctx := context.Background()
	mem := NewMemory()
	var logs bytes.Buffer
	key := bytes.Repeat([]byte("k"), 32)
	s := NewSigned(mem, key, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := s.Put(ctx, "approval-answer:A", []byte("once"), 0); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get(ctx, "approval-answer:A"); err != nil || string(v) != "once" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	sealed, _ := mem.Get(ctx, "approval-answer:A")
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	other := NewSigned(mem, bytes.Repeat([]byte("o"), 32), nil)
	for name, write := range map[string]func(k string) error{
		"plain":       func(k string) error { return mem.Put(ctx, k, []byte("once"), 0) },
		"altered":     func(k string) error { return mem.Put(ctx, k, altered, 0) },
		"moved":       func(k string) error { return mem.Put(ctx, k, sealed, 0) },
		"another key": func(k string) error { return other.Put(ctx, k, []byte("once"), 0) },
		"truncated":   func(k string) error { return mem.Put(ctx, k, sealed[:headerLen-1], 0) },
		"bad mac": func(k string) error {
			return mem.Put(ctx, k, []byte(signedMagic+strings.Repeat("A", macLen)+".once"), 0)
		},
	} {
		k := "approval-answer:" + strings.ReplaceAll(name, " ", "-")
		if err := write(k); err != nil {
			t.Fatal(err)
		}
		logs.Reset()
		if v, err := s.Get(ctx, k); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: Get = %q, %v; want ErrNotFound", name, v, err)
		}
		if !strings.Contains(logs.String(), "key="+k) || strings.Contains(logs.String(), "once") {
			t.Errorf("%s: the refusal is logged naming the key, never the value: %q", name, logs.String())
		}
		logs.Reset()
		_, _ = s.Get(ctx, k)
		if logs.Len() != 0 {
			t.Errorf("%s: the same refused value is logged again: %q", name, logs.String())
		}
	}
	m, err := s.Scan(ctx, "approval-answer:")
	if err != nil || len(m) != 1 || string(m["approval-answer:A"]) != "once" {
		t.Fatalf("Scan = %q, %v; want the one sealed value", m, err)
	}
	// A claimed key is held by whatever is there, verified or not.
	if won, _ := s.Claim(ctx, "approval-answer:plain", []byte("declined"), 0); won {
		t.Error("claimed a key another value holds")
	}
	if won, _ := s.Claim(ctx, "approval-answer:B", []byte("always"), 0); !won {
		t.Error("Claim of an absent key")
	}
	if v, _ := s.Get(ctx, "approval-answer:B"); string(v) != "always" {
		t.Errorf("the claimed value: %q", v)
	}
	// Without a key: a random one, verified by this store alone.
	a, b := NewSigned(mem, nil, nil), NewSigned(mem, nil, nil)
	_ = a.Put(ctx, "x", []byte("1"), 0)
	if _, err := b.Get(ctx, "x"); !errors.Is(err, ErrNotFound) {
		t.Error("two random keys verified each other's values")
	}
	if v, err := a.Get(ctx, "x"); err != nil || string(v) != "1" {
		t.Errorf("a random key's own value: %q %v", v, err)
	}
}

func FuzzSignedOpen(f *testing.F) {
	s := NewSigned(NewMemory(), bytes.Repeat([]byte("k"), 32), nil)
	f.Add(s.Seal("k", []byte("once")))
	f.Add([]byte("once"))
	f.Add([]byte(signedMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := s.Open("k", data)
		if ok && !bytes.Equal(s.Seal("k", v), data) {
			t.Fatalf("opened %q, which does not seal back to the input", data)
		}
	})
}
