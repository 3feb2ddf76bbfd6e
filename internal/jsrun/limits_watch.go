//go:build unix || windows

package jsrun

import (
	"os"
	"runtime/metrics"
	"time"
)

// asSlack is the memory the operating system's backstop (an address-space
// or commit limit) allows beyond twice the limit.
const asSlack = 128 << 20

func memorySamples() []metrics.Sample {
	return []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
}

// watchMemory ends the process with exitMemory once the runtime holds more
// than limit bytes over what it held at the start. The operating system's
// limit is the hard bound; this turns most overruns into a clean exit
// before it.
func watchMemory(limit int64) {
	s := memorySamples()
	held := func() int64 {
		metrics.Read(s)
		return int64(s[0].Value.Uint64()) - int64(s[1].Value.Uint64())
	}
	base := held()
	go func() {
		t := time.NewTicker(2 * time.Millisecond)
		for range t.C {
			if held()-base > limit {
				os.Exit(exitMemory)
			}
		}
	}()
}
