package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler wraps h so that every record's message and attribute values
// (strings, errors, Stringers, and groups of them) are scrubbed by s before
// h sees them. Install it where the logger is built, and every log line the
// runtime writes goes through the redactor.
func (s *Set) Handler(h slog.Handler) slog.Handler { return &handler{h: h, s: s} }

type handler struct {
	h slog.Handler
	s *Set
}

var _ slog.Handler = (*handler)(nil)

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = h.attr(a)
	}
	return &handler{h: h.h.WithAttrs(clean), s: h.s}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{h: h.h.WithGroup(name), s: h.s}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = h.attr(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.s.String(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.s.String(x.String()))
		case []string:
			c := make([]string, len(x))
			for i := range x {
				c[i] = h.s.String(x[i])
			}
			return slog.Any(a.Key, c)
		default:
			// Anything else (maps, structs) is rendered by the inner
			// handler; render it here so the text can be scrubbed.
			return slog.String(a.Key, h.s.String(fmt.Sprintf("%+v", x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
