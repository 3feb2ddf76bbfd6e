package config_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
)

// TestQuotas: the top-level quotas: list (issue 48) decodes rate and
// tokens as N/unit, burst and concurrent as whole numbers of at least 1,
// with burst defaulting to rate's N (capped).
func TestQuotas(t *testing.T) {
	src := `quotas:
  - identities: [token:intern]
    tools: ["gh_*"]
    rate: 30/min
    burst: 10
    concurrent: 4
    tokens: 200000/day
  - rate: 5/s
  - tools: ["*"]
    rate: 100000/hour
  - concurrent: 1
  - tokens: 10/d
`
	c, err := config.Parse("f.yaml", []byte(src), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Quotas) != 5 {
		t.Fatalf("quotas = %+v", c.Quotas)
	}
	q := c.Quotas[0]
	if q.Rate != (config.PerPeriod{N: 30, Period: time.Minute}) || q.Burst != 10 || q.Concurrent != 4 ||
		q.Tokens != (config.PerPeriod{N: 200000, Period: 24 * time.Hour}) ||
		strings.Join(q.Identities, ",") != "token:intern" || strings.Join(q.Tools, ",") != "gh_*" || q.Pos.Line != 2 {
		t.Errorf("quota 0 = %+v", q)
	}
	if q.BurstOrDefault() != 10 {
		t.Errorf("burst = %d", q.BurstOrDefault())
	}
	if b := c.Quotas[1].BurstOrDefault(); c.Quotas[1].Rate.Period != time.Second || b != 5 {
		t.Errorf("quota 1 = %+v, burst %d", c.Quotas[1], b)
	}
	if b := c.Quotas[2].BurstOrDefault(); b != config.MaxDefaultBurst {
		t.Errorf("default burst of 100000/hour = %d, want the cap %d", b, config.MaxDefaultBurst)
	}
	js, _ := json.Marshal(c.Quotas[0])
	if !strings.Contains(string(js), `"rate":"30/min"`) || !strings.Contains(string(js), `"tokens":"200000/day"`) {
		t.Errorf("json = %s", js)
	}
}

// TestQuotasMalformed: every malformed quota is an error at its position,
// saying what was wanted.
func TestQuotasMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"not a list", "quotas: {rate: 1/s}\n", "f.yaml:1:9: quotas: want a list"},
		{"no limit", "quotas:\n  - tools: [a]\n", "f.yaml:2:5: quotas[0]: a quota needs at least one of rate, concurrent or tokens"},
		{"empty entry", "quotas:\n  - {}\n", "f.yaml:2:5: quotas[0]: a quota needs at least one of rate, concurrent or tokens"},
		{"rate without slash", "quotas:\n  - rate: 30\n", `f.yaml:2:11: quotas[0].rate: rate "30": want N/unit`},
		{"rate bad unit", "quotas:\n  - rate: 30/week\n", `quotas[0].rate: rate "30/week": unknown unit "week"`},
		{"rate zero", "quotas:\n  - rate: 0/min\n", "want a whole number from 1"},
		{"rate negative", "quotas:\n  - rate: -3/min\n", "want a whole number from 1"},
		{"rate fraction", "quotas:\n  - rate: 1.5/min\n", "want a whole number from 1"},
		{"rate huge", "quotas:\n  - rate: 99999999999999999999/min\n", "want a whole number from 1"},
		{"rate a list", "quotas:\n  - rate: [1]\n", "quotas[0].rate: want a string, got a list"},
		{"rate null", "quotas:\n  - rate:\n", "quotas[0].rate: want a string, got null"},
		{"tokens bad", "quotas:\n  - tokens: lots\n", `quotas[0].tokens: tokens "lots": want N/unit`},
		{"burst zero", "quotas:\n  - {rate: 1/s, burst: 0}\n", "quotas[0].burst: burst must be at least 1, got 0"},
		{"burst text", "quotas:\n  - {rate: 1/s, burst: many}\n", `quotas[0].burst: want an integer, got "many"`},
		{"burst without rate", "quotas:\n  - {concurrent: 2, burst: 3}\n", "quotas[0].burst: burst is the size of rate's bucket"},
		{"concurrent zero", "quotas:\n  - concurrent: 0\n", "quotas[0].concurrent: concurrent must be at least 1, got 0"},
		{"concurrent negative", "quotas:\n  - concurrent: -2\n", "concurrent must be at least 1, got -2"},
		{"concurrent null", "quotas:\n  - concurrent:\n", "quotas[0].concurrent: want a whole number of at least 1, got null"},
		{"bad tool glob", "quotas:\n  - {tools: [\"gh_[\"], rate: 1/s}\n", `quotas[0].tools[0]: pattern "gh_[" is not a valid glob`},
		{"empty tool glob", "quotas:\n  - {tools: [\"\"], rate: 1/s}\n", `quotas[0].tools[0]: pattern "" is empty`},
		{"bad identity glob", "quotas:\n  - {identities: [\"token:[\"], rate: 1/s}\n", `quotas[0].identities[0]: identity pattern "token:[" is not a valid glob`},
		{"unknown key", "quotas:\n  - {rate: 1/s, rpm: 3}\n", `unknown key "rpm"`},
		{"env var not echoed", "quotas:\n  - rate: ${QUOTA_RATE}\n", "quotas[0].rate: rate the value of ${QUOTA_RATE}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := func(k string) (string, bool) {
				if k == "QUOTA_RATE" {
					return "secretish/fortnight", true
				}
				return lookup(k)
			}
			_, err := config.Parse("f.yaml", []byte(tc.src), env)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secretish") {
				t.Errorf("an interpolated value in the message: %v", err)
			}
			e, ok := config.AsErrors(err)
			if !ok {
				t.Fatalf("not *Errors: %v", err)
			}
			for _, x := range e.List {
				if x.Line <= 0 {
					t.Errorf("error without position: %#v", x)
				}
			}
		})
	}
}

func TestParsePerPeriod(t *testing.T) {
	for s, want := range map[string]config.PerPeriod{
		"30/min": {30, time.Minute}, "30/m": {30, time.Minute}, "1/sec": {1, time.Second}, "2/s": {2, time.Second},
		"3/hour": {3, time.Hour}, "4/h": {4, time.Hour}, "5/day": {5, 24 * time.Hour}, "6/d": {6, 24 * time.Hour},
		" 7 / min ": {7, time.Minute},
	} {
		got, err := config.ParsePerPeriod(s)
		if err != nil || got != want {
			t.Errorf("ParsePerPeriod(%q) = %v, %v; want %v", s, got, err, want)
		}
		if err == nil {
			if back, _ := config.ParsePerPeriod(got.String()); back != got {
				t.Errorf("%q round trip: %q", s, got.String())
			}
		}
	}
	for _, s := range []string{"", "/", "1/", "/min", "x/min", "1/minutes", "1/2m", "0/s", "1/S"} {
		if _, err := config.ParsePerPeriod(s); err == nil {
			t.Errorf("ParsePerPeriod(%q): no error", s)
		}
	}
}
