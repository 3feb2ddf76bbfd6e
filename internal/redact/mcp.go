package redact

import (
	"context"
	"errors"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Middleware scrubs every result and error an MCP server returns to its
// client (tools/call results of meta-tools, passthrough tools and help
// alike; prompts; resources). Install it last with
// Server.AddReceivingMiddleware so that it is the outermost layer and sees
// the final answer. The client's own requests are not touched.
func (s *Set) Middleware() sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if s.n.Load() == 0 {
				return res, err
			}
			if res != nil {
				if clean, ok := s.JSONInto(res).(sdk.Result); ok {
					res = clean
				}
			}
			return res, s.rpcError(err)
		}
	}
}

// SendingMiddleware scrubs the parameters of what a server sends on its own
// (log and progress notifications, elicitation and sampling requests).
// Install it with Server.AddSendingMiddleware.
func (s *Set) SendingMiddleware() sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if s.n.Load() > 0 && req != nil {
				if p := req.GetParams(); p != nil {
					if clean := s.JSONInto(p); clean != any(p) {
						setParams(req, clean)
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// setParams replaces req.Params (the SDK's request types are generic
// structs with an exported Params field of the params' pointer type).
func setParams(req sdk.Request, clean any) {
	v := reflect.ValueOf(req)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	f := v.Elem().FieldByName("Params")
	if f.IsValid() && f.CanSet() && reflect.TypeOf(clean).AssignableTo(f.Type()) {
		f.Set(reflect.ValueOf(clean))
	}
}

func (s *Set) rpcError(err error) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		c := *we
		c.Message = s.String(c.Message)
		c.Data = s.Bytes(c.Data)
		return &c
	}
	return s.Error(err)
}
