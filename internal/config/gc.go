package config

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Defaults of server.gc, chosen for a long-running gateway (bench/overhead,
// bench/load): collect less often than Go's GOGC=100, since most of a
// call's garbage is the SDK's short-lived message buffers, but collect
// harder once the heap nears a soft limit, so that a large catalog does not
// grow without bound.
const (
	DefaultGCPercent     = 400
	DefaultGCMemoryLimit = 256 << 20
)

// GC is server.gc: the Go garbage collector of `serve`. The environment's
// GOGC and GOMEMLIMIT, when set, win over both.
type GC struct {
	// Percent is the GOGC percentage (0 = DefaultGCPercent, -1 = collect
	// only at the memory limit).
	Percent int `json:"percent,omitempty" yaml:"percent,omitempty"`
	// MemoryLimit is the soft memory limit in bytes, written as a number or
	// with a unit ("512MiB", "1GiB"); 0 = DefaultGCMemoryLimit.
	MemoryLimit int64 `json:"memoryLimit,omitempty" yaml:"memoryLimit,omitempty"`
}

// decodeField decodes server.gc: a percent of at least -1, a size with a
// unit.
func (g *GC) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	switch key {
	case "percent":
		d.integer(v, p, &g.Percent)
		if g.Percent < -1 {
			d.errAt(v, p, "GC percent %d: want -1 (off) or more", g.Percent)
		}
	case "memoryLimit":
		s, ok := d.str(v, p, false)
		if !ok {
			return true
		}
		n, err := ParseSize(s)
		if err != nil {
			d.errAt(v, p, "%v", err)
			return true
		}
		g.MemoryLimit = n
	}
	return true
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}

// ParseSize reads a byte count: a whole number with an optional unit (B,
// KB, MB, GB, KiB, MiB, GiB), as GOMEMLIMIT writes it.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || (mult > 1 && n > (1<<62)/mult) {
		return 0, &sizeError{s}
	}
	return n * mult, nil
}

type sizeError struct{ s string }

func (e *sizeError) Error() string {
	return "invalid size " + strconv.Quote(clip(e.s)) + `: want a whole number of bytes, optionally with a unit (e.g. "256MiB")`
}
