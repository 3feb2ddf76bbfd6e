package index

import (
	"os"
	"os/exec"
	"testing"

	"github.com/agent-tools/agent-tools/internal/index/cjk"
)

// chineseDocs: tools described only in Chinese, beside English ones.
var chineseDocs = map[string][]Doc{
	"svc1": {
		{ID: "weather.forecast", Name: "tianqi", Description: "获取城市的天气预报", Params: []Param{{Name: "chengshi", Description: "城市名称"}}},
		{ID: "weather.alerts", Name: "yujing", Description: "查询气象预警信息"},
	},
	"svc2": {
		{ID: "news.headlines", Name: "xinwen", Description: "搜索最新新闻"},
		{ID: "news.translate", Name: "fanyi", Description: "翻译文本"},
	},
	"en": {
		{ID: "en.read_file", Name: "read_file", Description: "Read a file from disk."},
	},
}

func TestCJKGloss(t *testing.T) {
	cases := []struct {
		query, want string
	}{
		{"weather forecast for a city", "weather.forecast"},
		{"translate text", "news.translate"},
		{"search the latest news", "news.headlines"},
		{"天气预报", "weather.forecast"}, // the original text stays indexed
		{"read a file", "en.read_file"},
	}
	for _, gloss := range []bool{true, false} {
		cfg := DefaultConfig()
		cfg.CJKGloss = gloss
		ix := NewWithConfig(cfg)
		for p, ds := range chineseDocs {
			ix.Replace(p, ds)
		}
		for _, c := range cases {
			hs := ix.Search(c.query, Options{})
			top := ""
			if len(hs) > 0 {
				top = hs[0].ID
			}
			// Without the gloss only the Chinese and the English queries
			// can find their tool.
			wantFound := gloss || c.query == "天气预报" || c.query == "read a file"
			if (top == c.want) != wantFound {
				t.Errorf("gloss %v: %q ranks %q first (hits %v), want %q found: %v", gloss, c.query, top, ids(hs), c.want, wantFound)
			}
		}
	}
}

// TestCJKDictionaryLoadsOnlyForCJK runs in a child process (the dictionary
// is loaded once per process): an index of English tools searched in
// English never decompresses the dictionary.
func TestCJKDictionaryLoadsOnlyForCJK(t *testing.T) {
	if os.Getenv("AGENT_TOOLS_CJK_CHILD") == "1" {
		order, by := synthCatalog(500)
		ix := New()
		for _, p := range order {
			ix.Replace(p, by[p])
		}
		for _, q := range synthQueries(50) {
			ix.Search(q, Options{})
		}
		if cjk.Loaded() {
			t.Fatal("dictionary loaded without any Chinese text")
		}
		ix.Search("天气", Options{})
		if !cjk.Loaded() {
			t.Fatal("dictionary not loaded for a Chinese query")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCJKDictionaryLoadsOnlyForCJK$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AGENT_TOOLS_CJK_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
