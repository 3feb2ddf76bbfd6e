package provider

import "context"

// Caller says who makes a call: the session, the client's name and, over
// authenticated HTTP, the user the bearer token or JWT identifies (never
// the token). In-process providers read it with CallerFrom.
type Caller struct {
	Session string
	Client  string
	User    string
}

type callerKey struct{}

// WithCaller returns a context carrying c. The facade and the embedding
// API's sessions set it for every call.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller of the call ctx belongs to (zero if unknown).
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}
