package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

func TestRulesValidate(t *testing.T) {
	for _, tc := range []struct {
		rules Rules
		ok    bool
	}{
		{Rules{}, true},
		{Rules{Deny: []string{"*_delete_*"}, Confirm: ConfirmHuman}, true},
		{Rules{Deny: []string{"[a-"}}, false},
		{Rules{Allow: []string{"\\"}}, false},
		{Rules{Confirm: "robot"}, false},
	} {
		if err := tc.rules.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: err = %v", tc.rules, err)
		}
	}
}

func TestNeedsConfirm(t *testing.T) {
	on, off := catalog.ProviderInfo{RequireConfirm: true}, catalog.ProviderInfo{}
	for _, tc := range []struct {
		tool catalog.Tool
		p    catalog.ProviderInfo
		want bool
	}{
		{catalog.Tool{ReadOnly: true}, on, false},
		{catalog.Tool{}, on, true},
		{catalog.Tool{}, off, false},
		{catalog.Tool{AlwaysConfirm: true}, off, true},
	} {
		if got := NeedsConfirm(tc.tool, tc.p); got != tc.want {
			t.Errorf("%+v %+v = %v", tc.tool, tc.p, got)
		}
	}
}

func TestLoopGuardBoundsMemory(t *testing.T) {
	now := time.Unix(0, 0)
	g := NewLoopGuard()
	g.MaxKeys = 10
	g.Now = func() time.Time { now = now.Add(time.Millisecond); return now }
	for i := range 100 {
		g.Failed(fmt.Sprint(i))
	}
	kept := 0
	for i := range 100 {
		if _, n := g.Refused(fmt.Sprint(i)); n > 0 {
			kept++
		}
	}
	if kept > g.MaxKeys {
		t.Fatalf("%d keys kept, bound %d", kept, g.MaxKeys)
	}
	if _, n := g.Refused("99"); n != 1 {
		t.Fatalf("the newest key must survive, count %d", n)
	}
	g.Succeeded("99")
	if _, n := g.Refused("99"); n != 0 {
		t.Fatal("success must reset the key")
	}
}
