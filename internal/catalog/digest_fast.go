package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"strconv"
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
	h := sha256.New()
	var buf []byte
	w := func(b []byte) { h.Write(b) }
	str := func(key, s string, omitEmpty bool) {
		if omitEmpty && s == "" {
			return
		}
		buf = append(buf[:0], key...)
		buf = appendString(buf, s)
		w(buf)
	}
	raw := func(key string, r json.RawMessage) bool {
		if len(r) == 0 {
			return true
		}
		if !plain(r) {
			return false
		}
		w([]byte(key))
		w(r)
		return true
	}
	str(`{"name":`, d.Name, false)
	str(`,"title":`, d.Title, true)
	str(`,"description":`, d.Description, false)
	if !raw(`,"inputSchema":`, d.InputSchema) || !raw(`,"outputSchema":`, d.OutputSchema) {
		return ""
	}
	if d.ReadOnly {
		w([]byte(`,"readOnly":true`))
	}
	if d.AlwaysConfirm {
		w([]byte(`,"alwaysConfirm":true`))
	}
	if !raw(`,"icons":`, d.Icons) || !raw(`,"_meta":`, d.Meta) {
		return ""
	}
	w([]byte{'}'})
	return hex.EncodeToString(sumOf(h))
}

func sumOf(h hash.Hash) []byte { return h.Sum(nil) }

// plain reports whether json.Marshal would write the JSON r unchanged: no
// blank outside a string, no character it escapes for HTML (<, >, &, and
// U+2028, U+2029), no invalid UTF-8.
func plain(r []byte) bool {
	in, esc := false, false
	for i := 0; i < len(r); i++ {
		c := r[i]
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
			esc = false
		case c == '<' || c == '>' || c == '&':
			return false
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
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
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
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
