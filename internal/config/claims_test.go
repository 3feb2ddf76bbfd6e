package config_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestRuleClaims(t *testing.T) {
	c, err := parse(t, "policy:\n  rules:\n    - claims: {groups: [admins, ops], email_verified: [\"true\"]}\n      deny: [\"local.*\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{"groups": {"admins", "ops"}, "email_verified": {"true"}}; !reflect.DeepEqual(c.Policy.Rules[0].Claims, want) {
		t.Errorf("claims %v", c.Policy.Rules[0].Claims)
	}
	cases := []struct{ claims, want string }{
		{"{groups: admins}", "want a list"},
		{"{groups: []}", "want a non-empty list of values"},
		{"{groups: [true]}", "want a string, got boolean true"},
		{"[groups]", "want a mapping"},
	}
	for _, tc := range cases {
		_, err := parse(t, "policy:\n  rules:\n    - claims: "+tc.claims+"\n")
		lines := errorsOf(t, err)
		if !slices.ContainsFunc(lines, func(l string) bool {
			return strings.Contains(l, tc.want) && strings.Contains(l, "policy.rules[0].claims")
		}) {
			t.Errorf("%s: errors %q, want %q", tc.claims, lines, tc.want)
		}
	}
}
