//go:build !onnx

package localmodel

import "context"

// Built reports whether this binary has the model runtime: it has not (see
// BuildCommand).
const Built = false

// Model is the model runtime's stand-in in a binary built without it.
type Model struct{}

// Open reports ErrNotBuilt: this binary has no model runtime.
func Open(string) (*Model, error) { return nil, ErrNotBuilt }

// Load reports ErrNotBuilt.
func Load(context.Context, string) (*Model, error) { return nil, ErrNotBuilt }

// Wait reports ErrNotBuilt.
func (*Model) Wait(context.Context) error { return ErrNotBuilt }

// Spec is empty.
func (*Model) Spec() Spec { return Spec{} }

// Embed reports ErrNotBuilt.
func (*Model) Embed(context.Context, []string) ([][]float32, error) { return nil, ErrNotBuilt }

// Close does nothing.
func (*Model) Close() error { return nil }
