package jsonrpcwire

// A goroutine starts with a small stack that the runtime doubles, by
// copying, whenever a call needs more. The go-sdk serves each request on a
// fresh goroutine, and a tools/call goes some 60 frames deep through the SDK,
// the runtime's middleware, the pipeline, the JSON schema validator and the
// upstream's client: the stack was copied two or three times per call, each
// copy walking every frame on it (~25% of the runtime's own CPU per proxied
// call in a profile of bench/overhead). GrowStack, called at the top of such
// a goroutine, makes one copy while the stack is still shallow (a few frames
// to adjust) and leaves room for the rest of the call.

// stackFrame is the stack GrowStack reserves: with what the goroutine
// already uses, the runtime rounds the stack up to 16 KiB (a size it caches
// per P), enough for a whole proxied tools/call in a profile of
// bench/overhead (20 KiB, which makes 32 KiB stacks, cost more: they are not
// cached).
const stackFrame = 10 << 10

// GrowStack makes room for a deep call on the current goroutine's stack. It
// costs one stack copy while the stack is shallow (or nothing when the stack
// is already large enough) instead of several later ones.
func GrowStack() { _ = grow(0) }

//go:noinline
func grow(i int) byte {
	var buf [stackFrame]byte
	buf[i] = 1
	return buf[len(buf)-1-i]
}
