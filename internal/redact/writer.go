package redact

import "io"

// Writer returns a writer that scrubs each Write before passing it to w.
// Use it for line-oriented sinks whose writes are whole records (the audit
// log writes one JSON line per Write): a secret split across two writes
// would not be recognised. It reports len(p) written on success, so callers
// see no difference when a replacement changed the length.
func (s *Set) Writer(w io.Writer) io.Writer { return &writer{w: w, s: s} }

type writer struct {
	w io.Writer
	s *Set
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.s.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
