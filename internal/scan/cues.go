package scan

// cueSearch finds every rule's cues in one pass over a text (Aho–Corasick
// over the ASCII-lowercased bytes), so that a text none of whose cues
// occurs costs one table lookup a byte, whatever the number of rules.
type cueSearch struct {
	next [][128]int32 // state × byte → state (bytes ≥ 128 go to the root)
	out  [][]cueHit   // state → the cues ending there
}

type cueHit struct {
	rule int // index into textRules
	n    int // the cue's length
}

var cues = buildCues()

func buildCues() *cueSearch {
	c := &cueSearch{next: make([][128]int32, 1), out: make([][]cueHit, 1)}
	for ri := range textRules {
		for _, cue := range textRules[ri].Cues {
			s := int32(0)
			for i := 0; i < len(cue); i++ {
				b := cue[i] & 0x7F
				if c.next[s][b] == 0 {
					c.next = append(c.next, [128]int32{})
					c.out = append(c.out, nil)
					c.next[s][b] = int32(len(c.next) - 1)
				}
				s = c.next[s][b]
			}
			c.out[s] = append(c.out[s], cueHit{rule: ri, n: len(cue)})
		}
	}
	// Failure links, breadth first, folded into the table.
	fail := make([]int32, len(c.next))
	queue := []int32{}
	for b := range 128 {
		if t := c.next[0][b]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		c.out[s] = append(c.out[s], c.out[fail[s]]...)
		for b := range 128 {
			t := c.next[s][b]
			if t == 0 {
				c.next[s][b] = c.next[fail[s]][b]
				continue
			}
			fail[t] = c.next[fail[s]][b]
			queue = append(queue, t)
		}
	}
	return c
}

// maxCueSpots bounds how many places per rule are looked at in one text.
const maxCueSpots = 64

// find returns, per rule with a cue in s, where its cues start (up to
// maxCueSpots).
func (c *cueSearch) find(s string) map[int][]int {
	var spots map[int][]int
	st := int32(0)
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 0x80 {
			st = 0
			continue
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		st = c.next[st][b]
		for _, h := range c.out[st] {
			if spots == nil {
				spots = map[int][]int{}
			}
			if len(spots[h.rule]) < maxCueSpots {
				spots[h.rule] = append(spots[h.rule], i+1-h.n)
			}
		}
	}
	return spots
}
