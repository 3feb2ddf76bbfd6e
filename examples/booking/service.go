package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// The service's own logic. REST handlers and MCP tools both call these
// functions and nothing else: no business logic in the MCP layer, so that
// people and agents can never see two versions of a rule.

// Slot is one bookable hour.
type Slot struct {
	Date string `json:"date"` // YYYY-MM-DD
	Time string `json:"time"` // HH:MM
}

// Booking is a booked slot.
type Booking struct {
	ID        string `json:"id"`
	ClientID  string `json:"client_id"`
	Date      string `json:"date"`
	Time      string `json:"time"`
	Cancelled bool   `json:"cancelled"`
}

// Client is a customer.
type Client struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
}

// Errors callers branch on (REST maps them to status codes).
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrInvalid  = errors.New("invalid")
)

// openingHours are the bookable slots of every day.
var openingHours = []string{"09:00", "10:00", "11:00", "12:00", "14:00", "15:00", "16:00", "17:00"}

// Service keeps bookings and clients in memory.
type Service struct {
	now func() time.Time

	mu       sync.Mutex
	bookings []Booking
	clients  []Client
	seq      int
}

// NewService returns a service with two clients.
func NewService(now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{now: now, clients: []Client{
		{ID: "c1", Name: "Ada Lovelace", Email: "ada@example.com"},
		{ID: "c2", Name: "Alan Turing", Email: "alan@example.com"},
	}}
}

// day validates a date, "" meaning today.
func (s *Service) day(date string) (string, error) {
	if date == "" {
		return s.now().Format(time.DateOnly), nil
	}
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return "", fmt.Errorf("%w: date %q must be YYYY-MM-DD", ErrInvalid, date)
	}
	return date, nil
}

// FreeSlots lists the slots of a day that nobody booked.
func (s *Service) FreeSlots(date string) ([]Slot, error) {
	d, err := s.day(date)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Slot{}
	for _, h := range openingHours {
		if !s.takenLocked(d, h) {
			out = append(out, Slot{Date: d, Time: h})
		}
	}
	return out, nil
}

func (s *Service) takenLocked(date, hour string) bool {
	return slices.ContainsFunc(s.bookings, func(b Booking) bool { return !b.Cancelled && b.Date == date && b.Time == hour })
}

// BookingRequest is what Create needs.
type BookingRequest struct {
	ClientID string `json:"client_id" jsonschema:"the client's id (clients_list)"`
	Date     string `json:"date,omitempty" jsonschema:"YYYY-MM-DD; today when empty"`
	Time     string `json:"time" jsonschema:"HH:MM, one of the free slots"`
}

// Create books a free slot for a known client.
func (s *Service) Create(r BookingRequest) (Booking, error) {
	d, err := s.day(r.Date)
	if err != nil {
		return Booking{}, err
	}
	if !slices.Contains(openingHours, r.Time) {
		return Booking{}, fmt.Errorf("%w: time %q is not a slot (slots: %s)", ErrInvalid, r.Time, strings.Join(openingHours, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.ContainsFunc(s.clients, func(c Client) bool { return c.ID == r.ClientID }) {
		return Booking{}, fmt.Errorf("%w: client %q", ErrNotFound, r.ClientID)
	}
	if s.takenLocked(d, r.Time) {
		return Booking{}, fmt.Errorf("%w: %s %s is already booked", ErrConflict, d, r.Time)
	}
	s.seq++
	b := Booking{ID: fmt.Sprintf("b%d", s.seq), ClientID: r.ClientID, Date: d, Time: r.Time}
	s.bookings = append(s.bookings, b)
	return b, nil
}

// Cancel cancels a booking.
func (s *Service) Cancel(id string) (Booking, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.bookings, func(b Booking) bool { return b.ID == id })
	if i < 0 {
		return Booking{}, fmt.Errorf("%w: booking %q", ErrNotFound, id)
	}
	if s.bookings[i].Cancelled {
		return Booking{}, fmt.Errorf("%w: booking %q is already cancelled", ErrConflict, id)
	}
	s.bookings[i].Cancelled = true
	return s.bookings[i], nil
}

// Agenda lists a day's bookings (cancelled ones included, marked).
func (s *Service) Agenda(date string) ([]Booking, error) {
	d, err := s.day(date)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Booking{}
	for _, b := range s.bookings {
		if b.Date == d {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b Booking) int { return strings.Compare(a.Time, b.Time) })
	return out, nil
}

// Clients lists the clients.
func (s *Service) Clients() []Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.clients)
}

// AddClient adds a client.
func (s *Service) AddClient(name, email string) (Client, error) {
	if strings.TrimSpace(name) == "" {
		return Client{}, fmt.Errorf("%w: a name is required", ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Client{ID: fmt.Sprintf("c%d", len(s.clients)+1), Name: name, Email: email}
	s.clients = append(s.clients, c)
	return c, nil
}
