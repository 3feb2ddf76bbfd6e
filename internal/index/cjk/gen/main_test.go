package main

import (
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	src := `export default {"all":[
		["天氣","天气","tian1 qi4","weather",[],[]],
		["王","王","Wang2","surname Wang",[],[]],
		["王","王","wang2",["king or monarch","great"],[],[]],
		["個","个","ge4",["(classifier used before a noun)","(bound form) individual"],[],[]],
		["詒","诒","yi2",["variant of 貽|贻[yi2]"],[],[]],
		["3D打印","3D打印","san1 D da3 yin4","3D printing",[],[]],
		["搜索","搜索","sou1 suo3","to search (a place, a database, online etc); to search for (sth)",[],[]]
	]}`
	got, err := build([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range got {
		lines = append(lines, e.head+"="+e.gloss)
	}
	want := "个=individual|個=individual|天气=weather|天氣=weather|搜索=to search|王=king or monarch"
	if s := strings.Join(lines, "|"); s != want {
		t.Errorf("build =\n %s\nwant\n %s", s, want)
	}
}

func TestBuildMalformed(t *testing.T) {
	for _, src := range []string{
		``, `{"all":[]}`, `export default [`, `export default {"all":[["a","b"]]}`,
		`export default {"all":[[1,2,3,4]]}`, `export default {"all":[["天","天","x",5]]}`,
	} {
		if _, err := build([]byte(src)); err == nil {
			t.Errorf("build(%q) succeeded", src)
		}
	}
}

func TestFirstGloss(t *testing.T) {
	for _, c := range []struct {
		senses []string
		want   string
	}{
		{[]string{"CL:個|个[ge4]", "map"}, "map"},
		{[]string{"used in 自個兒|自个儿[zi4 ge3 r5]"}, ""},
		{[]string{"(literary) (of a monarch) to reign over (a kingdom)"}, "to reign over"},
		{[]string{"one two three four five six seven eight nine ten"}, "one two three four five six seven eight"},
		{[]string{"abbr. for 北京大學|北京大学[Bei3 jing1 Da4 xue2], Peking University"}, "Peking University"},
	} {
		if got := firstGloss(c.senses); got != c.want {
			t.Errorf("firstGloss(%q) = %q, want %q", c.senses, got, c.want)
		}
	}
}

func FuzzBuild(f *testing.F) {
	f.Add(`export default {"all":[["天氣","天气","tian1 qi4","weather",[],[]]]}`)
	f.Add(`export default {"all":[["a","b","c",["(x","y)"]]]}`)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		table, err := build([]byte(s))
		if err != nil {
			return
		}
		for i, e := range table {
			if e.head == "" || e.gloss == "" || strings.ContainsAny(e.gloss, "\t\n") || (i > 0 && table[i-1].head >= e.head) {
				t.Fatalf("bad entry %d: %+v", i, e)
			}
		}
	})
}
