package pins

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-tools/agent-tools/internal/scan"
	"github.com/agent-tools/agent-tools/internal/state"
)

// The index is a compact copy of what a warm start needs of the pins file
// (each pin's tool, provider, digest and flags), so that a start with
// 10,000 pins reads ~1 MB of it instead of scanning the ~5 MB file, every
// definition included, and keeps no definition in memory until one is
// needed (docs/pins.md).
//
// It is a cache of the file, never a second authority:
//
//   - It names the version of the pins file it was made from: the file's
//     size, modification and change times, inode and device, and the
//     CRC-32C of its bytes. The file is read (not parsed) and its CRC
//     compared at every load; any difference (another process wrote the
//     file, a person edited it, a checkout replaced it) and the index is
//     not used: the file is parsed as before and a new index written.
//   - A pin that carries more than the comparison needs (a pending change,
//     the scanner's findings) is kept in the index as its whole JSON, so a
//     pin read from the index decides exactly as the file's would.
//   - Anything that needs a pin's definition (a changed digest, a new tool,
//     a listing, an approval, a write) reads the file first
//     (Store.materializeLocked): the index never supplies a definition, and
//     the file is never written from it.
//   - An index that does not decode (truncated, corrupt, another version)
//     is logged and ignored; it never stops a start.
//
// It lives under the user's state directory (IndexPath), never in the
// project: a committed agent-tools.pins.json gets no file beside it. It is
// as trusted as that directory, where the default pins file is too: who
// can write the index can write the pins. An index brought from elsewhere
// (another checkout, a restored cache) names another inode and change
// time, which a process cannot set, and is not used.

// indexMagic starts an index file (its format's version is in it).
const indexMagic = "agent-tools pins index 1\n"

// maxIndex bounds what is read of an index.
const maxIndex = maxFile

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// fileVersion identifies one version of the pins file for the index.
type fileVersion struct {
	size         int64
	mtime, ctime int64 // nanoseconds; ctime 0 where the system gives none
	ino, dev     uint64
	crc          uint32 // CRC-32C of the file's bytes
}

// versionOf is fi's version, with the CRC of its bytes.
func versionOf(fi os.FileInfo, crc uint32) fileVersion {
	v := fileVersion{size: fi.Size(), mtime: fi.ModTime().UnixNano(), crc: crc}
	v.dev, v.ino, v.ctime = fileIdentity(fi)
	return v
}

// Index entry kinds.
const (
	entryHead = 0 // tool, provider, digest, scanned, flags
	entryJSON = 1 // the whole pin, as the file has it
)

// Head flags.
const (
	flagNew      = 1
	flagApproved = 2
)

// indexed reports whether r is kept in the index as its head only: what
// is left out (its definition, time and Fields) is read only when its
// digest differs from the upstream's, which reads the file.
func indexed(r *Record) bool {
	return r.Changed == nil && len(r.Findings) == 0 && r.Digest != ""
}

// head is what a warm start needs of a pin: its provider, digest, the
// rule set it was scanned by and whether a person approved it. A pin kept
// whole in the index (a pending change, findings) has it in rec.
type pinHead struct {
	provider, digest, scanned string
	flags                     byte
	rec                       *Record
}

// heads are the pins read from the index, by tool.
type heads map[string]pinHead

func headOf(r *Record) pinHead {
	h := pinHead{provider: r.Provider, digest: r.Digest, scanned: r.Scanned, rec: r}
	if r.New {
		h.flags |= flagNew
	}
	if r.Approved {
		h.flags |= flagApproved
	}
	return h
}

// observe is Store.ObserveBatch on pins read from the index, when it would
// change no pin and read no definition: every tool pinned by its provider
// with its digest, scanned by these rules, and (a live list) no pending
// change to clear. Then the only tools held are those the scanner flags
// under security.scan: quarantine and no person approved, as there. ok is
// false otherwise (the caller reads the file and observes as usual).
func (hs heads) observe(b Batch) (held map[string]string, ok bool) {
	return hs.observeAs(b, false)
}

// observeAs is observe; unchecked holds every tool it cannot decide
// (HeldUnchecked) instead of failing: nothing is trusted or pinned that the
// pins do not hold (the pins file could not be read back).
func (hs heads) observeAs(b Batch, unchecked bool) (held map[string]string, ok bool) {
	hold := func(name, why string) {
		if held == nil {
			held = map[string]string{}
		}
		held[name] = why
	}
	for _, t := range b.Tools {
		if t.Canonical == "" || t.Digest == "" {
			continue
		}
		h, found := hs[t.Canonical]
		if !found || h.provider != t.Provider || h.digest != t.Digest || h.flags&flagNew != 0 ||
			b.Scan != nil && h.scanned != scan.Version || !b.Cached && h.rec != nil && h.rec.Changed != nil {
			if !unchecked {
				return nil, false
			}
			hold(t.Canonical, HeldUnchecked)
			continue
		}
		if b.Scan != nil && h.flags&flagApproved == 0 && h.rec != nil && b.ScanMode.Holds(h.rec.Findings) {
			hold(t.Canonical, HeldSuspicious)
		}
	}
	return held, true
}

// encodeIndex writes the index of a pins file of version v.
func encodeIndex(v fileVersion, approvals uint64, recs []*Record) ([]byte, error) {
	b := make([]byte, 0, 64+len(recs)*112)
	b = append(b, indexMagic...)
	b = binary.AppendUvarint(b, uint64(v.size))
	b = binary.AppendVarint(b, v.mtime)
	b = binary.AppendVarint(b, v.ctime)
	b = binary.AppendUvarint(b, v.ino)
	b = binary.AppendUvarint(b, v.dev)
	b = binary.LittleEndian.AppendUint32(b, v.crc)
	b = binary.AppendUvarint(b, approvals)
	b = binary.AppendUvarint(b, uint64(len(recs)))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, r := range recs {
		if !indexed(r) {
			raw, err := r.encode()
			if err != nil {
				return nil, err
			}
			b = append(b, entryJSON)
			str(string(raw))
			continue
		}
		b = append(b, entryHead)
		str(r.Tool)
		str(r.Provider)
		str(r.Digest)
		str(r.Scanned)
		var f byte
		if r.New {
			f |= flagNew
		}
		if r.Approved {
			f |= flagApproved
		}
		b = append(b, f)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable)), nil
}

var errIndex = errors.New("not a pins index")

// decodeIndex reads an index: its pins' heads (index.go), and the pins it
// keeps whole, decoded, with the checks of Parse.
func decodeIndex(data []byte) (v fileVersion, approvals uint64, hs heads, err error) {
	if len(data) < len(indexMagic)+4 || string(data[:len(indexMagic)]) != indexMagic {
		return v, 0, nil, errIndex
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return v, 0, nil, fmt.Errorf("%w: checksum mismatch (truncated or altered)", errIndex)
	}
	// One string holds every name and digest: no allocation per pin.
	d := indexReader{s: string(body[len(indexMagic):])}
	v.size = int64(d.uvarint())
	v.mtime = d.varint()
	v.ctime = d.varint()
	v.ino = d.uvarint()
	v.dev = d.uvarint()
	v.crc = d.uint32()
	approvals = d.uvarint()
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.s)) { // every entry takes a byte at least
		return v, 0, nil, fmt.Errorf("%w: bad header", errIndex)
	}
	hs = make(heads, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		var tool string
		var h pinHead
		switch d.byte() {
		case entryHead:
			tool, h.provider, h.digest, h.scanned = d.str(), d.str(), d.str(), d.str()
			h.flags = d.byte()
			if h.flags&^(flagNew|flagApproved) != 0 || h.digest == "" || h.provider == "" {
				d.fail()
			}
		case entryJSON:
			raw := d.str()
			r := new(Record)
			if d.err == nil && json.Unmarshal([]byte(raw), r) != nil {
				d.fail()
			}
			// A pin the writer would have kept as a head is not one it
			// wrote: refuse it, so an index decodes one way only.
			if r.Provider == "" || r.Digest == "" && r.Changed == nil || r.Changed != nil && r.Changed.Digest == "" || indexed(r) {
				d.fail()
			}
			tool, h = r.Tool, headOf(r)
		default:
			d.fail()
		}
		if _, dup := hs[tool]; tool == "" || dup {
			d.fail()
		}
		hs[tool] = h
	}
	if d.err != nil || d.s != "" {
		return v, 0, nil, fmt.Errorf("%w: bad entry", errIndex)
	}
	return v, approvals, hs, nil
}

// indexReader decodes an index's body; the first error sticks.
type indexReader struct {
	s   string
	err error
}

func (d *indexReader) fail() {
	if d.err == nil {
		d.err = errIndex
	}
	d.s = ""
}

func (d *indexReader) byte() byte {
	if d.s == "" {
		d.fail()
		return 0xff
	}
	c := d.s[0]
	d.s = d.s[1:]
	return c
}

func (d *indexReader) uvarint() uint64 {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if d.s == "" {
			break
		}
		c := d.s[0]
		d.s = d.s[1:]
		if c < 0x80 {
			if shift == 63 && c > 1 {
				break
			}
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
	}
	d.fail()
	return 0
}

func (d *indexReader) varint() int64 {
	u := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (d *indexReader) uint32() uint32 {
	if len(d.s) < 4 {
		d.fail()
		return 0
	}
	x := uint32(d.s[0]) | uint32(d.s[1])<<8 | uint32(d.s[2])<<16 | uint32(d.s[3])<<24
	d.s = d.s[4:]
	return x
}

func (d *indexReader) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.s)) {
		d.fail()
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

// IndexPath is where the index of the pins file at pinsPath is kept: under
// the user's state directory ($XDG_STATE_HOME/agent-tools/pins/index, else
// ~/.local/state/agent-tools/pins/index), named after the pins file's
// directory and a hash of its path. "" (no index) without a state
// directory or a pins file.
func IndexPath(pinsPath string, lookupEnv func(string) (string, bool)) string {
	dir := stateDir(lookupEnv)
	if pinsPath == "" || dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(pinsPath); err == nil {
		pinsPath = abs
	}
	sum := sha256.Sum256([]byte(pinsPath))
	name := strings.TrimSuffix(filepath.Base(pinsPath), ".json")
	if name == strings.TrimSuffix(FileName, ".json") { // a project's own file: name its project
		name = filepath.Base(filepath.Dir(pinsPath))
	}
	return filepath.Join(dir, "pins", "index", name+"-"+hex.EncodeToString(sum[:6])+".idx")
}

// stateDir is agent-tools' directory under the user's state directory.
func stateDir(lookupEnv func(string) (string, bool)) string {
	if d, ok := lookupEnv("XDG_STATE_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "agent-tools")
	}
	if h, ok := lookupEnv("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "agent-tools")
	}
	return ""
}

// crcOf is the CRC-32C of what r yields.
func crcOf(r io.Reader) (uint32, error) {
	h := crc32.New(crcTable)
	buf := make([]byte, 64<<10)
	if _, err := io.CopyBuffer(h, r, buf); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// writeIndexFile replaces the index with state.WriteFile, the one atomic
// write. It is a cache (a torn one fails its checksum and the next start
// ignores it), but one write path is simpler than two, and the sync costs
// nothing a person waits for: the index is written when the pins change.
func writeIndexFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return state.WriteFile(path, data)
}
