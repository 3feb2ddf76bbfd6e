package cjk

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHasHanDoesNotLoad runs in a child process (the dictionary loads once
// per process): text without Han characters never loads it.
func TestHasHanDoesNotLoad(t *testing.T) {
	if os.Getenv("AGENT_TOOLS_CJK_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHasHanDoesNotLoad$", "-test.count=1")
		cmd.Env = append(os.Environ(), "AGENT_TOOLS_CJK_CHILD=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	for _, s := range []string{"", "get the weather forecast", "café résumé", "emoji 🙂 and ✓", "only kana: かなカナ", "한국어"} {
		if HasHan(s) {
			t.Errorf("HasHan(%q) = true", s)
		}
		if Gloss(s) != "" || len(Segment(s)) != 0 {
			t.Errorf("Gloss/Segment(%q) not empty", s)
		}
	}
	if Loaded() {
		t.Fatal("the dictionary was loaded for text without Han characters")
	}
	if !HasHan("查询天气") || !HasHan("abc 日本") {
		t.Error("HasHan misses Han text")
	}
	Gloss("天气")
	if !Loaded() {
		t.Error("not loaded by Chinese text")
	}
}

func TestSegmentAndGloss(t *testing.T) {
	cases := []struct {
		in      string
		words   []string
		glossed []string // words that must appear in the gloss
	}{
		{"查询天气", []string{"查询", "天气"}, []string{"check", "weather"}},
		{"获取城市的天气预报", []string{"获取", "城市", "的", "天气预报"}, []string{"gain", "city", "weather forecast"}},
		{"搜索新闻, then 翻译", []string{"搜索", "新闻", "翻译"}, []string{"search", "news", "translate"}},
		{"地圖", []string{"地圖"}, []string{"map"}}, // traditional form
		{"no chinese here", nil, nil},
	}
	for _, c := range cases {
		if got := Segment(c.in); strings.Join(got, "|") != strings.Join(c.words, "|") {
			t.Errorf("Segment(%q) = %q, want %q", c.in, got, c.words)
		}
		g := Gloss(c.in)
		for _, w := range c.glossed {
			if !strings.Contains(g, w) {
				t.Errorf("Gloss(%q) = %q, want it to contain %q", c.in, g, w)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		word, gloss string
		ok          bool
	}{
		{"天气", "weather", true}, {"地图", "map", true}, {"个", "individual", true},
		{"天气天气", "", false}, {"", "", false}, {"abc", "", false},
	} {
		g, ok := Lookup(c.word)
		if ok != c.ok || g != c.gloss {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", c.word, g, ok, c.gloss, c.ok)
		}
	}
}

// TestTableSorted: the embedded table is sorted and every line is
// headword<TAB>gloss, as lookup's binary search requires.
func TestTableSorted(t *testing.T) {
	d := table()
	if len(d.lines) < 100000 {
		t.Fatalf("%d headwords, want the full dictionary", len(d.lines))
	}
	prev := ""
	for i := range d.lines {
		h, g := d.line(i)
		if h == "" || g == "" || h <= prev {
			t.Fatalf("line %d: %q %q after %q", i, h, g, prev)
		}
		prev = h
	}
}

func TestLoadRejectsCorruptData(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("not gzip"), packed[:len(packed)/2]} {
		if _, err := load(b); err == nil {
			t.Errorf("load(%d bytes) succeeded", len(b))
		}
	}
}

func FuzzGloss(f *testing.F) {
	for _, s := range []string{"查询天气", "a查b询c", "\xff中", "地圖地圖地圖", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return
		}
		words := Segment(s)
		han := 0
		for _, r := range s {
			if IsHan(r) {
				han++
			}
		}
		n := 0
		for _, w := range words {
			if w == "" || !utf8.ValidString(w) || !strings.Contains(s, w) {
				t.Fatalf("Segment(%q) returned %q", s, w)
			}
			n += utf8.RuneCountInString(w)
		}
		if n != han {
			t.Fatalf("Segment(%q) covers %d Han runes, want %d", s, n, han)
		}
		_ = Gloss(s)
	})
}

// BenchmarkLoad decompresses and indexes the dictionary (what the first
// Chinese text costs) and reports the memory it holds.
func BenchmarkLoad(b *testing.B) {
	var mb float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d, err := load(packed)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		mb = float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
		runtime.KeepAlive(d)
	}
	b.ReportMetric(mb, "dict-MB")
}

// BenchmarkGloss glosses a typical Chinese tool description.
func BenchmarkGloss(b *testing.B) {
	const s = "获取指定城市的实时天气信息和未来七天的天气预报，包括温度、湿度和风速"
	Gloss(s)
	for b.Loop() {
		Gloss(s)
	}
}
