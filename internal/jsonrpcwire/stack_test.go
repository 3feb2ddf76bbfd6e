package jsonrpcwire

import (
	"fmt"
	"testing"
)

//go:noinline
func deep(n int) int {
	var b [96]byte
	b[n%96] = byte(n)
	if n == 0 {
		return int(b[0])
	}
	return deep(n-1) + int(b[n%96])
}

// BenchmarkDeepGoroutine: a fresh goroutine that goes ~110 frames and ~12 KiB
// deep, with and without Grow at its top.
func BenchmarkDeepGoroutine(b *testing.B) {
	for _, grow := range []bool{false, true} {
		b.Run(fmt.Sprintf("grow=%v", grow), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				done := make(chan int)
				go func() {
					if grow {
						GrowStack()
					}
					done <- deep(110)
				}()
				<-done
			}
		})
	}
}
