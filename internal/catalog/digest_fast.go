package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"
)

// digestFast is Definition.Digest without encoding/json's reflection and
// its validation pass over every schema: the same bytes json.Marshal
// writes, streamed into the hash (a warm start takes 10,000 digests). It
// returns "" for what it does not write the way json.Marshal does
// (annotations, a schema with blanks or HTML characters outside its
// strings), which Digest then hashes the slow way. The schemas are the
// ones the providers hand over: valid JSON (an invalid one gets another,
// equally stable digest than json.Marshal's error path would give).
func (d Definition) digestFast() string {
	if d.Annotations != nil {
		return ""
	}
	bp := digestBufs.Get().(*[]byte)
	buf, ok := d.appendJSON((*bp)[:0])
	out := ""
	if ok {
		sum := sha256.Sum256(buf)
		var hx [2 * sha256.Size]byte
		hex.Encode(hx[:], sum[:])
		out = string(hx[:])
	}
	if cap(buf) <= 64<<10 { // a huge schema's buffer is not kept
		*bp = buf[:0]
		digestBufs.Put(bp)
	}
	return out
}

// digestBufs hold the JSON being hashed: one buffer and one allocation
// (the hex string) per digest.
var digestBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendJSON appends d as json.Marshal writes it; false when it cannot
// tell that it would (see digestFast).
func (d Definition) appendJSON(buf []byte) ([]byte, bool) {
	raw := func(key string, r json.RawMessage) bool {
		if len(r) == 0 {
			return true
		}
		if !plain(r) {
			return false
		}
		buf = append(buf, key...)
		buf = append(buf, r...)
		return true
	}
	buf = append(buf, `{"name":`...)
	buf = appendString(buf, d.Name)
	if d.Title != "" {
		buf = append(buf, `,"title":`...)
		buf = appendString(buf, d.Title)
	}
	buf = append(buf, `,"description":`...)
	buf = appendString(buf, d.Description)
	if !raw(`,"inputSchema":`, d.InputSchema) || !raw(`,"outputSchema":`, d.OutputSchema) {
		return buf, false
	}
	if d.ReadOnly {
		buf = append(buf, `,"readOnly":true`...)
	}
	if d.AlwaysConfirm {
		buf = append(buf, `,"alwaysConfirm":true`...)
	}
	if !raw(`,"icons":`, d.Icons) || !raw(`,"_meta":`, d.Meta) {
		return buf, false
	}
	return append(buf, '}'), true
}

// asIs are the ASCII bytes json.Marshal writes in a string as they are.
var asIs = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// special are the bytes plain looks at; the others it skips.
var special = func() (t [256]bool) {
	for _, c := range []byte("\"<>&\\ \t\n\r") {
		t[c] = true
	}
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = true
	}
	return t
}()

// plain reports whether json.Marshal would write the JSON r unchanged: no
// blank outside a string, no character it escapes for HTML (<, >, &, and
// U+2028, U+2029), no invalid UTF-8.
func plain(r []byte) bool {
	in := false
	for i := 0; i < len(r); i++ {
		c := r[i]
		if !special[c] {
			continue
		}
		switch {
		case c >= utf8.RuneSelf:
			if c == 0xE2 && i+2 < len(r) && r[i+1] == 0x80 && (r[i+2] == 0xA8 || r[i+2] == 0xA9) {
				return false
			}
			rr, n := utf8.DecodeRune(r[i:])
			if rr == utf8.RuneError && n == 1 {
				return false
			}
			i += n - 1
		case c == '<' || c == '>' || c == '&':
			return false
		case c == '\\':
			// In a string, the escaped byte is skipped (unless it is one
			// that the checks above look at, as they did before the escape).
			if in && i+1 < len(r) && r[i+1] < utf8.RuneSelf && r[i+1] != '<' && r[i+1] != '>' && r[i+1] != '&' {
				i++
			}
		case c == '"':
			in = !in
		case !in: // a blank
			return false
		}
	}
	return !in
}

// appendString appends s as encoding/json writes a string (HTML-safe).
func appendString(dst []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if asIs[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexd[b>>4], hexd[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\u202`...)
			dst = strconv.AppendInt(dst, int64(c&0xF), 16)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
