package policy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func TestRulesCheck(t *testing.T) {
	tests := []struct {
		name    string
		rules   Rules
		tool    string
		denied  bool
		message string
	}{
		{"no rules", Rules{}, "gh_delete_repo", false, ""},
		{"deny glob", Rules{Deny: []string{"*_delete_*"}}, "gh_delete_repo", true, `tool "gh_delete_repo" is denied by policy rule "*_delete_*"`},
		{"deny names the first matching rule", Rules{Deny: []string{"fs_*", "gh_*", "*"}}, "gh_x", true, `policy rule "gh_*"`},
		{"deny misses", Rules{Deny: []string{"*_delete_*"}}, "gh_get_repo", false, ""},
		{"allow list admits", Rules{Allow: []string{"gh_get_*"}}, "gh_get_repo", false, ""},
		{"allow list is exhaustive", Rules{Allow: []string{"gh_get_*"}}, "gh_list_repos", true, `tool "gh_list_repos" is not on the allow list`},
		{"deny wins over allow", Rules{Allow: []string{"gh_*"}, Deny: []string{"gh_delete_*"}}, "gh_delete_repo", true, "is denied by policy rule"},
		{"a glob matches the whole name", Rules{Deny: []string{"gh"}}, "gh_get", false, ""},
		{"bare local names", Rules{Deny: []string{"deploy"}}, "deploy", true, `"deploy" is denied`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rules.check(tt.tool)
			if (err != nil) != tt.denied {
				t.Fatalf("Check(%q) = %v, want denied %v", tt.tool, err, tt.denied)
			}
			if err != nil && (err.Code != toolerr.Denied || !strings.Contains(err.Message, tt.message) || err.Hint == "") {
				t.Errorf("error = %+v, want DENIED with %q and a hint", err, tt.message)
			}
			if tt.rules.Visible(tt.tool) == tt.denied {
				t.Errorf("Visible(%q) = %v, want %v", tt.tool, !tt.denied, !tt.denied)
			}
		})
	}
}

func TestLoopGuardRefusesAndCoolsDown(t *testing.T) {
	now := time.Unix(1000, 0)
	g := NewLoopGuard()
	g.Now = func() time.Time { return now }
	for i := 1; i <= g.RefuseAfter; i++ {
		if refused, _ := g.Refused("k"); refused {
			t.Fatalf("refused after %d failures", i-1)
		}
		n := g.Failed("k")
		if n != i {
			t.Fatalf("count = %d, want %d", n, i)
		}
		if want := i >= 3; g.Escalate(n) != want {
			t.Errorf("Escalate(%d) = %v, want %v", n, !want, want)
		}
	}
	if refused, n := g.Refused("k"); !refused || n != g.RefuseAfter {
		t.Fatalf("after %d failures: refused %v (%d)", g.RefuseAfter, refused, n)
	}
	now = now.Add(g.CoolDown - time.Second)
	if refused, _ := g.Refused("k"); !refused {
		t.Fatal("the cool-down ended early")
	}
	now = now.Add(time.Second)
	if refused, n := g.Refused("k"); refused || n != 0 {
		t.Fatalf("after the cool-down: refused %v, count %d (want a fresh start)", refused, n)
	}
	if refused, n := g.Refused("never-failed"); refused || n != 0 {
		t.Errorf("unknown key: %v %d", refused, n)
	}
}

func TestLoopGuardEvictsExpiredFirst(t *testing.T) {
	now := time.Unix(0, 0)
	g := NewLoopGuard()
	g.MaxKeys = 3
	g.Now = func() time.Time { return now }
	g.Failed("old1")
	g.Failed("old2")
	now = now.Add(2 * g.CoolDown)
	g.Failed("fresh")
	g.Failed("new") // full: both expired keys go, the fresh one stays
	if _, n := g.Refused("fresh"); n != 1 {
		t.Fatalf("the fresh key was evicted (count %d)", n)
	}
	if _, n := g.Refused("new"); n != 1 {
		t.Fatalf("the newest key was not kept (count %d)", n)
	}
}

func TestTokensRedeem(t *testing.T) {
	now := time.Unix(0, 0)
	tk := NewTokens()
	tk.Now = func() time.Time { return now }
	a := tk.Issue("call-a")
	if !strings.HasPrefix(a, "ct_") || a == tk.Issue("call-a") {
		t.Fatalf("tokens must be fresh and prefixed: %q", a)
	}
	tests := []struct {
		name string
		tok  string
		key  string
		want bool
	}{
		{"wrong call", a, "call-b", false},
		{"right call", a, "call-a", true},
		{"only once", a, "call-a", false},
		{"unknown", "ct_forged", "call-a", false},
		{"empty", "", "call-a", false},
	}
	for _, tt := range tests {
		if got := tk.Redeem(tt.tok, tt.key); got != tt.want {
			t.Errorf("%s: Redeem = %v, want %v", tt.name, got, tt.want)
		}
	}
	late := tk.Issue("call-c")
	now = now.Add(tk.TTL)
	if tk.Redeem(late, "call-c") {
		t.Error("an expired token was accepted")
	}
}

// TestTokensStoreNothingAtIssue: a token verifies itself, so issuing
// thousands keeps no memory; only redeemed ids are remembered (in Store).
func TestTokensStoreNothingAtIssue(t *testing.T) {
	store := &state.Memory{MaxKeys: 5}
	tk := NewTokensWithKey(make([]byte, 32), store)
	var toks []string
	for i := range 100 {
		toks = append(toks, tk.Issue(fmt.Sprint(i)))
	}
	if got, _ := store.Scan(context.Background(), ""); len(got) != 0 {
		t.Fatalf("issuing stored %d entries", len(got))
	}
	if !tk.Redeem(toks[99], "99") || !tk.Redeem(toks[0], "0") {
		t.Fatal("tokens issued long before were refused")
	}
}

func TestTokensConcurrent(t *testing.T) {
	tk := NewTokens()
	var wg sync.WaitGroup
	var mu sync.Mutex
	redeemed := 0
	tok := tk.Issue("k")
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk.Issue("other")
			if tk.Redeem(tok, "k") {
				mu.Lock()
				redeemed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if redeemed != 1 {
		t.Errorf("a token was redeemed %d times", redeemed)
	}
}
