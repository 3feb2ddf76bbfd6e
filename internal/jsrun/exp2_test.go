package jsrun

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/dop251/goja"
)

func TestExp2(t *testing.T) {
	src := os.Getenv("EXP_SRC")
	if src == "" {
		t.Skip()
	}
	vm := goja.New()
	vm.SetMaxCallStackSize(1000)
	start := time.Now()
	timer := time.AfterFunc(2*time.Second, func() { vm.Interrupt("timeout") })
	defer timer.Stop()
	v, err := vm.RunScript("code.js", src)
	s := ""
	if v != nil {
		s = v.String()
		if len(s) > 100 {
			s = s[:100]
		}
	}
	e := fmt.Sprint(err)
	if len(e) > 200 {
		e = e[:200]
	}
	fmt.Printf("RESULT %v err=%s in %v\n", s, e, time.Since(start))
}
