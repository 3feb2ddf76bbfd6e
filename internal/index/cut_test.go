package index

import "testing"

func TestCut(t *testing.T) {
	flat := []float64{10, 9.8, 9.5, 9.1, 8.8, 8.5, 8.0, 7.7, 7.1, 6.9, 6.5, 6.0, 5.9, 5.5, 5.2, 5.1, 5.0}
	clear := []float64{20, 6, 5, 4, 3, 2, 1}
	unit := func(int) int { return 100 }
	cases := []struct {
		name   string
		scores []float64
		o      CutOptions
		want   int
	}{
		{"empty", nil, DefaultCut, 0},
		{"flat scores give many hits, up to Max", flat, DefaultCut, 15},
		{"a clear winner gives Min", clear, DefaultCut, 3},
		{"fewer hits than Min", []float64{3, 1}, DefaultCut, 2},
		{"ratio in between", []float64{10, 8, 6, 5, 4, 1}, CutOptions{Min: 1, Max: 10, Ratio: 0.5}, 4},
		{"budget cuts", flat, CutOptions{Min: 3, Max: 15, Ratio: 0.5, Budget: 450, Cost: unit}, 4},
		{"budget keeps the first hit", flat, CutOptions{Min: 3, Max: 15, Ratio: 0.5, Budget: 50, Cost: unit}, 1},
		{"no ratio: Max", flat, CutOptions{Max: 5}, 5},
		{"zero scores", []float64{0, 0, 0, 0}, CutOptions{Min: 1, Max: 3, Ratio: 0.5}, 3},
	}
	for _, c := range cases {
		if got := Cut(c.scores, c.o); got != c.want {
			t.Errorf("%s: Cut = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestExplain(t *testing.T) {
	ix := sampleIndex()
	hs := ix.Search("post a message to the channel", Options{Explain: true, Limit: 3})
	if len(hs) == 0 || hs[0].ID != "slack.post_message" {
		t.Fatalf("hits %v", ids(hs))
	}
	if want := "matched name: post, message; description: channel"; hs[0].Why != want {
		t.Errorf("why = %q, want %q", hs[0].Why, want)
	}
	if hs := ix.Search("post a message", Options{Limit: 1}); hs[0].Why != "" {
		t.Errorf("why without Explain: %q", hs[0].Why)
	}
	cfg := DefaultConfig()
	ix2 := NewWithConfig(cfg)
	for p, ds := range chineseDocs {
		ix2.Replace(p, ds)
	}
	hs = ix2.Search("weather forecast", Options{Explain: true, Limit: 1})
	if len(hs) == 0 || hs[0].Why != "matched description: weather, forecast" {
		t.Errorf("Chinese tool: %+v", hs)
	}
}
