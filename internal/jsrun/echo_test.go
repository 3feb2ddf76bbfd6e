package jsrun

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dop251/goja"
)

var echoOnce sync.Once

// registerEcho installs echo(x): a synchronous host call that returns x.
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
			return RunMain(s, vm, sc.Code)
		})
	})
}

func init() { registerEcho() }
