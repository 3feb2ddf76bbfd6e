package scan

import "strings"

// cueSearch finds every rule's cues in one pass over a text (Aho–Corasick
// over the ASCII-lowercased bytes), so that a text none of whose cues
// occurs costs one table lookup a byte, whatever the number of rules.
type cueSearch struct {
	// class maps a byte to its column in next: one per byte some cue has
	// (an upper-case letter is its lower case, any ASCII white space is
	// ' '), 0 for every other byte and the bytes of non-ASCII characters.
	class   [256]uint8
	classes int
	space   uint8 // the class of ' '
	// next is state × class → state, or ^state for a state where cues end.
	next []int16
	out  [][]cueHit // state → the cues ending there
}

type cueHit struct {
	rule int // index into textRules, or commentRule
	n    int // the cue's length
}

var cues = buildCues()

func buildCues() *cueSearch {
	type cue struct {
		rule int
		s    string
	}
	var all []cue
	for ri := range textRules {
		for _, c := range textRules[ri].Cues {
			if len(c) >= 64 || strings.Contains(c, "  ") || c != strings.ToLower(c) || strings.ContainsAny(c, "\t\n\r\v\f\x00") {
				panic("scan: cue " + c + " is not lower case with single spaces under 64 bytes")
			}
			all = append(all, cue{ri, c})
		}
	}
	all = append(all, cue{commentRule, "<!--"})

	c := &cueSearch{classes: 1}
	for _, e := range all {
		for i := 0; i < len(e.s); i++ {
			if b := e.s[i]; c.class[b] == 0 {
				c.class[b] = uint8(c.classes)
				c.classes++
			}
		}
	}
	for b := 'A'; b <= 'Z'; b++ {
		c.class[b] = c.class[b+'a'-'A']
	}
	c.space = c.class[' ']
	for _, b := range []byte("\t\n\r\v\f") {
		c.class[b] = c.space
	}

	// The trie, over classes.
	n := c.classes
	next := make([]int32, n)
	c.out = make([][]cueHit, 1)
	for _, e := range all {
		s := int32(0)
		for i := 0; i < len(e.s); i++ {
			k := int(s)*n + int(c.class[e.s[i]])
			if next[k] == 0 {
				next = append(next, make([]int32, n)...)
				c.out = append(c.out, nil)
				next[k] = int32(len(c.out) - 1)
			}
			s = next[k]
		}
		c.out[s] = append(c.out[s], cueHit{rule: e.rule, n: len(e.s)})
	}
	if len(c.out) >= 1<<15 {
		panic("scan: too many cue states")
	}
	// Failure links, breadth first, folded into the table.
	fail := make([]int32, len(c.out))
	queue := []int32{}
	for b := 1; b < n; b++ {
		if t := next[b]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		c.out[s] = append(c.out[s], c.out[fail[s]]...)
		for b := 1; b < n; b++ {
			k := int(s)*n + b
			t := next[k]
			if t == 0 {
				next[k] = next[int(fail[s])*n+b]
				continue
			}
			fail[t] = next[int(fail[s])*n+b]
			queue = append(queue, t)
		}
	}
	c.next = make([]int16, len(next))
	for k, t := range next {
		c.next[k] = int16(t)
		if len(c.out[t]) > 0 {
			c.next[k] = ^int16(t)
		}
	}
	return c
}

// maxCueSpots bounds how many places per rule are looked at in one text.
const maxCueSpots = 64

// commentRule is the rule index find reports "<!--" under.
const commentRule = -1

// minBase64 is the shortest run of the base64 alphabet that is decoded.
const minBase64 = 24

// isBase64 is the base64 alphabet (standard and URL-safe, no padding).
var isBase64 = func() (b64 [256]bool) {
	for b := 0; b < 0x80; b++ {
		b64[b] = 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '+' || b == '/' || b == '-' || b == '_'
	}
	return b64
}()

// found is what one pass over a text found.
type found struct {
	// spots are, per rule with a cue in the text, where its cues start
	// (up to maxCueSpots).
	spots map[int][]int
	// comment: the text has "<!--".
	comment bool
	// base64 are the runs of the base64 alphabet of minBase64 bytes or more.
	base64 [][2]int
}

// find reads s once. Cues are matched with runs of white space folded: a
// cue's space stands for any run of ASCII white space ("do not\n tell").
func (c *cueSearch) find(s string) found {
	var f found
	st := 0
	// pos keeps the offsets of the last bytes the automaton read (a run of
	// spaces is read as one), so that a cue's start is known.
	var pos [64]int32
	k := 0
	inSpace := false
	run := -1 // start of the current base64 run
	n, space := c.classes, c.space
	for i := 0; i < len(s); i++ {
		b := s[i]
		if isBase64[b] {
			if run < 0 {
				run = i
			}
		} else if run >= 0 {
			if i-run >= minBase64 {
				f.base64 = append(f.base64, [2]int{run, i})
			}
			run = -1
		}
		cl := c.class[b]
		if cl == space {
			if inSpace {
				continue
			}
			inSpace = true
		} else {
			inSpace = false
		}
		pos[k&63] = int32(i)
		k++
		t := c.next[st*n+int(cl)]
		if t >= 0 {
			st = int(t)
			continue
		}
		st = int(^t)
		for _, h := range c.out[st] {
			if h.rule == commentRule {
				f.comment = true
				continue
			}
			if f.spots == nil {
				f.spots = map[int][]int{}
			}
			if len(f.spots[h.rule]) < maxCueSpots {
				f.spots[h.rule] = append(f.spots[h.rule], int(pos[(k-h.n)&63]))
			}
		}
	}
	if run >= 0 && len(s)-run >= minBase64 {
		f.base64 = append(f.base64, [2]int{run, len(s)})
	}
	return f
}
