package decisions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agent-tools/agent-tools/internal/state"
)

// sharedKey holds the "always" decisions when replicas share state (the
// name predates the record's version 2; the value is sealed).
const sharedKey = "decisions:v1"

// Share keeps the "always" decisions in st (Redis, when replicas share
// state) instead of the file, so a person's "always allow" holds on every
// replica and `agent-tools decisions revoke` reaches them all. Session
// decisions stay in this process: a session lives on one replica.
//
// The record is sealed with the cluster key (st is a state.Signed): a
// record that does not verify — a plain SET by anyone who can write to
// Redis — is refused, logged, and treated as absent (no decisions).
func (s *Store) Share(st *state.Signed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shared = st
	s.refreshLocked()
}

// Where says where "always" decisions live, for messages.
func (s *Store) Where() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shared != nil {
		return "shared state (server.redis)"
	}
	if s.path == "" {
		return "memory"
	}
	return s.path
}

// loadShared reads the shared record; an absent one is an empty store, an
// unreadable one keeps what this process had (never applied from bad data).
func (s *Store) loadShared() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*state.OpTimeout)
	defer cancel()
	data, err := s.shared.Get(ctx, sharedKey)
	if errors.Is(err, state.ErrNotFound) {
		s.always = map[string]Record{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("decisions: reading shared state: %w", err)
	}
	recs, err := Parse(data)
	if err != nil {
		return fmt.Errorf("decisions: shared record: %w", err)
	}
	s.always = byKey(recs)
	return nil
}

func (s *Store) saveShared() error {
	data, err := json.Marshal(file{Version: fileVersion, Decisions: sorted(s.always)})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*state.OpTimeout)
	defer cancel()
	if err := s.shared.Put(ctx, sharedKey, data, 0); err != nil {
		return fmt.Errorf("decisions: writing shared state: %w", err)
	}
	return nil
}
