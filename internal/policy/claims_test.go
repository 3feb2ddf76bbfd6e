package policy

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestSelectClaimsAndMatch(t *testing.T) {
	rule := IdentityRule{Claims: map[string][]string{"groups": {"admins", "ops"}}, Rules: Rules{Deny: []string{"local.deploy"}}}
	tests := []struct {
		name   string
		token  string // the verified token's claims
		denied bool   // the rule matched
	}{
		{"string claim equal", `{"groups":"admins"}`, true},
		{"string claim other", `{"groups":"dev"}`, false},
		{"array claim contains", `{"groups":["dev","ops"]}`, true},
		{"array claim without", `{"groups":["dev","qa"]}`, false},
		{"missing claim", `{"sub":"alice"}`, false},
		{"no claims at all", `{}`, false},
		{"number is not the string", `{"groups":7}`, false},
		{"object never matches", `{"groups":{"admins":true}}`, false},
		{"null never matches", `{"groups":null}`, false},
		{"nested array is not flattened", `{"groups":[["admins"]]}`, false},
		{"mixed array keeps its strings", `{"groups":[1,true,"ops",{"x":1}]}`, true},
		{"case matters", `{"groups":"Admins"}`, false},
		{"an unnamed claim is not carried", `{"role":"admins"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAccess(nil, []IdentityRule{rule})
			if !slices.Equal(a.ClaimNames(), []string{"groups"}) {
				t.Fatalf("claim names %q", a.ClaimNames())
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.token), &raw); err != nil {
				t.Fatal(err)
			}
			c := SelectClaims(raw, a.ClaimNames())
			err := a.For("oidc:https://idp|alice", c, "").check("local", "local.deploy")
			if (err != nil) != tt.denied {
				t.Errorf("claims %q: denied=%v, want %v", c, err != nil, tt.denied)
			}
		})
	}
}

func TestClaimValues(t *testing.T) {
	tests := []struct {
		raw  string
		want []string
	}{
		{`"a"`, []string{"a"}},
		{`true`, []string{"true"}},
		{`false`, []string{"false"}},
		{`3`, []string{"3"}},
		{`-1.5e3`, []string{"-1.5e3"}},
		{`["b","a","b"]`, []string{"a", "b"}}, // sorted, de-duplicated
		{`[1,false,"x",null,{},[]]`, []string{"1", "false", "x"}},
		{`null`, nil},
		{`{"a":"b"}`, nil},
		{`[`, nil},
	}
	for _, tt := range tests {
		c := SelectClaims(map[string]json.RawMessage{"c": json.RawMessage(tt.raw)}, []string{"c"})
		got := c.decode()["c"]
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.raw, got, tt.want)
		}
	}
	// A rule with a claim and identities needs both; boolean and number
	// claims match their JSON text.
	a := NewAccess(nil, []IdentityRule{{Identities: []string{"oidc:https://idp|*"}, Claims: map[string][]string{"email_verified": {"true"}, "level": {"3"}}, Rules: Rules{Deny: []string{"x.y"}}}})
	raw := map[string]json.RawMessage{"email_verified": json.RawMessage(`true`), "level": json.RawMessage(`3`)}
	c := SelectClaims(raw, a.ClaimNames())
	if a.For("oidc:https://idp|bob", c, "").check("x", "x.y") == nil {
		t.Error("boolean and number claims did not match")
	}
	if a.For("oidc:https://other|bob", c, "").check("x", "x.y") != nil {
		t.Error("claims matched without the identity")
	}
	if a.For("oidc:https://idp|bob", SelectClaims(map[string]json.RawMessage{"level": json.RawMessage(`3`)}, a.ClaimNames()), "").check("x", "x.y") != nil {
		t.Error("one claim of two matched the rule")
	}
	// Same identity, other claims: another grant (the cache keys on them).
	if a.For("oidc:https://idp|bob", "", "").check("x", "x.y") != nil {
		t.Error("the cache kept the grant of other claims")
	}
}
