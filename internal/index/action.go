package index

import "strings"

// Action consistency (Config.ActionWeight): the verb of a request and the
// verb in a tool's name fall into broad action classes (read, write,
// delete). A candidate whose name names an action of another class than
// every action the (sub-)request asks for ("list the settings" vs
// kv_set, "create a ledger entry" vs entries_get) loses ActionWeight. Verbs
// are matched on surface forms with simple inflections, not stems
// ("settings" is not "set").

type actionClass uint8

const (
	actRead actionClass = 1 << iota
	actWrite
	actDelete
)

var actionVerbClass = func() map[string]actionClass {
	m := map[string]actionClass{}
	add := func(c actionClass, words string) {
		for _, w := range strings.Fields(words) {
			m[w] |= c
		}
	}
	add(actRead, `get list show display view read fetch retrieve describe search find query check
		inspect browse enumerate lookup look locate`)
	add(actWrite, `create add new make generate build insert write append post send upload set update
		edit modify change patch put replace configure save store rename register enable disable
		assign attach submit publish`)
	add(actDelete, `delete remove destroy drop erase purge clear uninstall unregister detach revoke`)
	return m
}()

// verbClass returns the action classes of a lower-cased word, allowing
// simple inflections (lists, listed, listing, creates, created, creating).
func verbClass(w string) actionClass {
	if c, ok := actionVerbClass[w]; ok {
		return c
	}
	for _, suf := range []string{"s", "es", "ed", "d", "ing"} {
		if b, ok := strings.CutSuffix(w, suf); ok && len(b) >= 2 {
			if c, ok := actionVerbClass[b]; ok {
				return c
			}
			if suf == "ing" || suf == "ed" {
				if c, ok := actionVerbClass[b+"e"]; ok { // creating, created
					return c
				}
				if n := len(b); n >= 2 && b[n-1] == b[n-2] { // setting -> set
					if c, ok := actionVerbClass[b[:n-1]]; ok && suf == "ed" {
						return c
					}
				}
			}
		}
	}
	return 0
}

// textActions returns the action classes of the words of a text.
func textActions(s string) actionClass {
	var c actionClass
	rawWords(s, func(w string, cjk bool) {
		if !cjk {
			c |= verbClass(w)
		}
	})
	return c
}
