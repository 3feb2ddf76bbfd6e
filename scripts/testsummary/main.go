// Command testsummary reads `go test -json` on stdin and prints what a
// person needs from it: each package's result line as `go test` prints it,
// the full output of every failed test, then every skipped test with its
// reason (a skip is otherwise invisible) and the slowest packages. It exits
// 1 when a test or a build failed. scripts/test.sh pipes the suite into it:
// with -live while the shards run (results and failures as they come), then
// with -report over the saved streams (skips and slowest packages).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json output (go doc test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	Elapsed    float64
	ImportPath string
}

type key struct{ pkg, test string }

type skip struct {
	pkg, test, reason string
}

type pkgTime struct {
	pkg     string
	elapsed float64
}

// parts say what summarize prints.
type parts struct{ live, report bool }

func main() {
	live := flag.Bool("live", false, "print only results and failures (no skip and time report)")
	report := flag.Bool("report", false, "print only the skip and time report")
	flag.Parse()
	p := parts{live: true, report: true}
	if *live != *report {
		p = parts{live: *live, report: *report}
	}
	failed, err := summarizeParts(os.Stdin, os.Stdout, p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func summarize(in io.Reader, out io.Writer) (failed bool, err error) {
	return summarizeParts(in, out, parts{live: true, report: true})
}

func summarizeParts(in io.Reader, realOut io.Writer, p parts) (failed bool, err error) {
	out := realOut
	if !p.live {
		out = io.Discard
	}
	output := map[key]*strings.Builder{}
	var skips []skip
	var times []pkgTime
	var passed, failedTests int // tests, not packages: the report's closing count
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(out, "%s\n", line) // not an event: a build error printed as is
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if e.Test == "" { // package lines: ok/FAIL and what TestMain printed
				if e.Output != "PASS\n" { // go test without -json prints no bare PASS either
					fmt.Fprint(out, e.Output)
				}
				continue
			}
			b := output[k]
			if b == nil {
				b = &strings.Builder{}
				output[k] = b
			}
			b.WriteString(e.Output)
		case "fail":
			failed = true
			if e.Test != "" {
				failedTests++
				if b := output[k]; b != nil {
					fmt.Fprint(out, b.String())
				}
			} else {
				times = append(times, pkgTime{e.Package, e.Elapsed})
			}
			delete(output, k)
		case "skip":
			if e.Test != "" { // (a package without test files is a skip too: nothing to say)
				skips = append(skips, skip{e.Package, e.Test, reason(output[k])})
			}
			delete(output, k)
		case "pass":
			if e.Test == "" {
				times = append(times, pkgTime{e.Package, e.Elapsed})
			} else {
				passed++
			}
			delete(output, k)
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	if p.report {
		printSkips(realOut, skips)
		printSlowest(realOut, times, 10)
		// The plain closing line a reader (or CI) counts by, subtests included.
		fmt.Fprintf(realOut, "\n%d passed, %d failed, %d skipped\n", passed, failedTests, len(skips))
	}
	return failed, nil
}

// reason is what a skipped test said: its t.Skip lines without the
// === RUN and --- SKIP framing.
func reason(b *strings.Builder) string {
	if b == nil {
		return "(no reason given)"
	}
	var parts []string
	for _, l := range strings.Split(b.String(), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

func printSkips(out io.Writer, skips []skip) {
	if len(skips) == 0 {
		fmt.Fprintln(out, "\n== skipped tests: none")
		return
	}
	sort.Slice(skips, func(i, j int) bool {
		if skips[i].pkg != skips[j].pkg {
			return skips[i].pkg < skips[j].pkg
		}
		return skips[i].test < skips[j].test
	})
	fmt.Fprintf(out, "\n== skipped tests: %d\n", len(skips))
	for _, s := range skips {
		r := s.reason
		if len(r) > 300 {
			r = r[:297] + "..."
		}
		fmt.Fprintf(out, "SKIP %s %s: %s\n", s.pkg, s.test, r)
	}
}

func printSlowest(out io.Writer, times []pkgTime, n int) {
	if len(times) == 0 {
		return
	}
	sort.Slice(times, func(i, j int) bool { return times[i].elapsed > times[j].elapsed })
	if len(times) > n {
		times = times[:n]
	}
	fmt.Fprintln(out, "\n== slowest packages")
	for _, t := range times {
		fmt.Fprintf(out, "%8.1fs %s\n", t.elapsed, t.pkg)
	}
}
