package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	agenttools "github.com/agent-tools/agent-tools"
)

// Availability is a day's free slots (GET /slots and booking_check_availability).
type Availability struct {
	Date  string `json:"date"`
	Slots []Slot `json:"slots"`
}

// Agenda is a day's bookings (GET /agenda and booking_list_agenda).
type Agenda struct {
	Date     string    `json:"date"`
	Bookings []Booking `json:"bookings"`
}

// ClientList is GET /api/v1/clients and clients_list.
type ClientList struct {
	Clients []Client `json:"clients"`
}

type dayIn struct {
	Date string `json:"date,omitempty" jsonschema:"YYYY-MM-DD; today when empty"`
}

type cancelIn struct {
	ID string `json:"id" jsonschema:"the booking's id, as booking_create or booking_list_agenda return it"`
}

type newClientIn struct {
	Name  string `json:"name" jsonschema:"the client's full name"`
	Email string `json:"email,omitempty"`
}

// Options configure the booking server.
type Options struct {
	// Addr is the listen address: /mcp's DNS-rebinding defence accepts any
	// Host when it is not loopback (auth protects it then).
	Addr string
	// Token, when set, is the bearer token REST and /mcp both require.
	Token string
	// OIDCIssuer and OIDCAudience, when set, accept JWTs from that issuer too.
	OIDCIssuer, OIDCAudience string
	Now                      func() time.Time
	Logger                   *slog.Logger
}

// Server is the booking service: REST, /mcp and the in-process agent path,
// all over one Service.
type Server struct {
	svc *Service
	rt  *agenttools.Runtime
	log *slog.Logger
	ver *oidc.IDTokenVerifier
	tok string

	mu      sync.Mutex
	enabled map[string]bool // the REST plugin guard; SetEnabled keeps MCP in step
}

// plugins are the service's plugins (each one MCP provider).
var plugins = []string{"booking", "clients"}

// NewServer registers the tools; Start starts the runtime.
func NewServer(o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	cfg := "mode: flat\n"
	if o.Addr != "" {
		cfg += fmt.Sprintf("server:\n  http:\n    addr: %q\n", o.Addr)
	}
	rt, err := agenttools.New(agenttools.Options{ConfigYAML: []byte(cfg), Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	s := &Server{svc: NewService(o.Now), rt: rt, log: o.Logger, tok: o.Token, enabled: map[string]bool{}}
	for _, p := range plugins {
		s.enabled[p] = true
	}
	if err := s.registerTools(); err != nil {
		return nil, err
	}
	if o.OIDCIssuer != "" {
		p, err := oidc.NewProvider(context.Background(), o.OIDCIssuer)
		if err != nil {
			return nil, err
		}
		s.ver = p.Verifier(&oidc.Config{ClientID: o.OIDCAudience, SkipClientIDCheck: o.OIDCAudience == ""})
	}
	return s, nil
}

// registerTools is the plugins' register_mcp_tools: each tool calls the
// same Service function as its REST endpoint.
func (s *Server) registerTools() error {
	rt, svc := s.rt, s.svc
	return errors.Join(
		rt.AddPlugin("booking", agenttools.PluginOptions{Description: "Appointments: free slots, bookings, the day's agenda."}),
		rt.AddPlugin("clients", agenttools.PluginOptions{Description: "The service's clients (who bookings are for)."}),
		agenttools.AddTool(rt, &agenttools.Tool{Namespace: "booking", Action: "check_availability", ReadOnly: true,
			Description: "List the free slots of a day (today by default). Same as GET /api/v1/booking/slots."},
			func(_ context.Context, _ *agenttools.CallInfo, in dayIn) (Availability, error) {
				slots, err := svc.FreeSlots(in.Date)
				return Availability{Date: day(svc, in.Date), Slots: slots}, err
			}),
		agenttools.AddTool(rt, &agenttools.Tool{Namespace: "booking", Action: "create",
			Description: "Book a free slot for a client. Same as POST /api/v1/booking/bookings."},
			func(_ context.Context, _ *agenttools.CallInfo, in BookingRequest) (Booking, error) {
				return svc.Create(in)
			}),
		agenttools.AddTool(rt, &agenttools.Tool{Namespace: "booking", Action: "cancel",
			Description: "Cancel a booking by id. Same as PATCH /api/v1/booking/bookings/{id}/cancel."},
			func(_ context.Context, _ *agenttools.CallInfo, in cancelIn) (Booking, error) {
				return svc.Cancel(in.ID)
			}),
		agenttools.AddTool(rt, &agenttools.Tool{Namespace: "booking", Action: "list_agenda", ReadOnly: true,
			Description: "List a day's bookings (today by default). Same as GET /api/v1/booking/agenda."},
			func(_ context.Context, _ *agenttools.CallInfo, in dayIn) (Agenda, error) {
				b, err := svc.Agenda(in.Date)
				return Agenda{Date: day(svc, in.Date), Bookings: b}, err
			}),
		agenttools.AddTool(rt, &agenttools.Tool{Namespace: "clients", Action: "list", ReadOnly: true,
			Description: "List the clients with their ids. Same as GET /api/v1/clients."},
			func(context.Context, *agenttools.CallInfo, struct{}) (ClientList, error) {
				return ClientList{Clients: svc.Clients()}, nil
			}),
		agenttools.AddTool(rt, &agenttools.Tool{Namespace: "clients", Action: "create",
			Description: "Add a client. Same as POST /api/v1/clients."},
			func(_ context.Context, _ *agenttools.CallInfo, in newClientIn) (Client, error) {
				return svc.AddClient(in.Name, in.Email)
			}),
	)
}

func day(svc *Service, date string) string {
	d, _ := svc.day(date)
	return d
}

// Start starts the runtime (no listener: the caller serves Handler).
func (s *Server) Start(ctx context.Context) error { return s.rt.Start(ctx) }

// Close stops the runtime.
func (s *Server) Close() error { return s.rt.Close() }

// Runtime is the embedded agent-tools runtime (the in-process agent's path).
func (s *Server) Runtime() *agenttools.Runtime { return s.rt }

// Handler is the whole service: REST under /api/v1 and MCP at /mcp, behind
// one auth.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /api/v1/booking/slots", s.plugin("booking", s.slots))
	mux.Handle("POST /api/v1/booking/bookings", s.plugin("booking", s.create))
	mux.Handle("PATCH /api/v1/booking/bookings/{id}/cancel", s.plugin("booking", s.cancel))
	mux.Handle("GET /api/v1/booking/agenda", s.plugin("booking", s.agenda))
	mux.Handle("GET /api/v1/clients", s.plugin("clients", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, ClientList{Clients: s.svc.Clients()}, nil)
	}))
	mux.Handle("POST /api/v1/clients", s.plugin("clients", s.addClient))
	mux.HandleFunc("PUT /api/v1/control/plugins/{id}", s.toggle)
	mux.Handle("/mcp", s.rt.Handler())
	return s.auth(mux)
}

func (s *Server) slots(w http.ResponseWriter, r *http.Request) {
	d := r.URL.Query().Get("date")
	slots, err := s.svc.FreeSlots(d)
	reply(w, http.StatusOK, Availability{Date: day(s.svc, d), Slots: slots}, err)
}

func (s *Server) agenda(w http.ResponseWriter, r *http.Request) {
	d := r.URL.Query().Get("date")
	b, err := s.svc.Agenda(d)
	reply(w, http.StatusOK, Agenda{Date: day(s.svc, d), Bookings: b}, err)
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var in BookingRequest
	if !decode(w, r, &in) {
		return
	}
	b, err := s.svc.Create(in)
	reply(w, http.StatusCreated, b, err)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	b, err := s.svc.Cancel(r.PathValue("id"))
	reply(w, http.StatusOK, b, err)
}

func (s *Server) addClient(w http.ResponseWriter, r *http.Request) {
	var in newClientIn
	if !decode(w, r, &in) {
		return
	}
	c, err := s.svc.AddClient(in.Name, in.Email)
	reply(w, http.StatusCreated, c, err)
}

// toggle is the control panel's switch: REST and MCP follow it at once.
func (s *Server) toggle(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Enabled *bool `json:"enabled"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Enabled == nil {
		reply(w, 0, nil, errors.Join(ErrInvalid, errors.New(`want {"enabled": true|false}`)))
		return
	}
	id := r.PathValue("id")
	err := s.rt.SetEnabled(r.Context(), id, *in.Enabled)
	if errors.Is(err, agenttools.ErrUnknownProvider) {
		err = errors.Join(ErrNotFound, err)
	}
	if err == nil {
		s.mu.Lock()
		s.enabled[id] = *in.Enabled
		s.mu.Unlock()
	}
	reply(w, http.StatusOK, map[string]any{"plugin": id, "enabled": *in.Enabled}, err)
}

// plugin is the REST plugin guard: a disabled plugin's endpoints answer 503.
func (s *Server) plugin(id string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		on := s.enabled[id]
		s.mu.Unlock()
		if !on {
			reply(w, http.StatusServiceUnavailable, map[string]string{"error": "plugin " + id + " is disabled"}, nil)
			return
		}
		h(w, r)
	})
}

// auth is the one check REST and /mcp share: a bearer token (compared in
// constant time) or, when configured, an OIDC JWT. With neither configured
// it lets everything through (main then binds loopback only).
func (s *Server) auth(next http.Handler) http.Handler {
	if s.tok == "" && s.ver == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case ok && s.tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.tok)) == 1:
		case ok && s.ver != nil && verifies(r.Context(), s.ver, tok):
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="booking"`)
			reply(w, http.StatusUnauthorized, map[string]string{"error": "a valid bearer token is required"}, nil)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func verifies(ctx context.Context, v *oidc.IDTokenVerifier, tok string) bool {
	_, err := v.Verify(ctx, tok)
	return err == nil
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		reply(w, 0, nil, errors.Join(ErrInvalid, err))
		return false
	}
	return true
}

// reply writes v as JSON, or err with the status its kind calls for.
func reply(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		status = http.StatusInternalServerError
		switch {
		case errors.Is(err, ErrInvalid):
			status = http.StatusBadRequest
		case errors.Is(err, ErrNotFound):
			status = http.StatusNotFound
		case errors.Is(err, ErrConflict):
			status = http.StatusConflict
		}
		if errors.Is(err, agenttools.ErrUnavailable) {
			status = http.StatusConflict
		}
		v = map[string]string{"error": err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
