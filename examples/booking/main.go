// Command booking is a small booking service that embeds agent-tools:
// REST endpoints for people, the same operations as MCP tools for
// agents at /mcp on the same listener, a control endpoint that toggles a
// plugin for both at once, and one auth for REST and MCP.
//
//	go run ./examples/booking [--addr 127.0.0.1:8090]
//
// BOOKING_TOKEN sets the bearer token; BOOKING_OIDC_ISSUER (and
// BOOKING_OIDC_AUDIENCE) accept JWTs too. With neither, only a loopback
// address is served, without auth.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "booking:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("booking", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address (REST under /api/v1, MCP at /mcp)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	o := Options{Token: os.Getenv("BOOKING_TOKEN"), OIDCIssuer: os.Getenv("BOOKING_OIDC_ISSUER"),
		OIDCAudience: os.Getenv("BOOKING_OIDC_AUDIENCE"), Logger: log, Addr: *addr}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if o.Token == "" && o.OIDCIssuer == "" && !ln.Addr().(*net.TCPAddr).IP.IsLoopback() {
		ln.Close()
		return errors.New("refusing a non-loopback --addr without auth: set BOOKING_TOKEN (or BOOKING_OIDC_ISSUER)")
	}
	s, err := NewServer(o)
	if err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	defer s.Close()
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil {
			log.Warn("shutdown left connections open", "err", err)
		}
	}()
	log.Info("booking service", "url", "http://"+ln.Addr().String(), "mcp", "http://"+ln.Addr().String()+"/mcp", "auth", o.Token != "" || o.OIDCIssuer != "")
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
