package jsrun

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dop251/goja"
)

var echoOnce sync.Once

// registerEcho installs echo(x): a synchronous host call that returns x,
// and later(x): an asynchronous one.
func registerEcho() {
	echoOnce.Do(func() {
		Register("test-echo", func(ctx context.Context, s *Session, vm *goja.Runtime, sc *Script, host *Host) (goja.Value, error) {
			err := vm.Set("echo", func(c goja.FunctionCall) goja.Value {
				var v any
				if err := host.Call(ctx, "echo", c.Argument(0).Export(), &v); err != nil {
					panic(vm.NewGoError(err))
				}
				b, _ := json.Marshal(v)
				var out any
				_ = json.Unmarshal(b, &out)
				return vm.ToValue(out)
			})
			if err != nil {
				return nil, err
			}
			// later(x): the same as a Promise, through Host.Start.
			err = vm.Set("later", func(c goja.FunctionCall) goja.Value {
				p, resolve, reject := vm.NewPromise()
				host.Start(ctx, s, "echo", c.Argument(0).Export(), func(res json.RawMessage, err error) error {
					if err != nil {
						return reject(vm.NewGoError(err))
					}
					var v any
					if err := json.Unmarshal(res, &v); err != nil {
						return err
					}
					return resolve(v)
				})
				return vm.ToValue(p)
			})
			if err != nil {
				return nil, err
			}
			return RunMain(s, vm, sc.Code)
		})
	})
}

func init() { registerEcho() }
