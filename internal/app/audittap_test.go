package app

import (
	"bytes"
	"fmt"
	"testing"
)

func TestAuditTap(t *testing.T) {
	var a App
	if a.tap.tee(nil) != nil {
		t.Fatal("audit off must stay off")
	}
	var file bytes.Buffer
	w := a.tap.tee(&file)
	for i := range auditTapRecent + 5 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	recent, lines, cancel := a.SubscribeAudit()
	if len(recent) != auditTapRecent || string(recent[0]) != "line 5\n" {
		t.Fatalf("recent: %d lines, first %q", len(recent), recent[0])
	}
	buf := []byte("live\n")
	if _, err := w.Write(buf); err != nil {
		t.Fatal(err)
	}
	buf[0] = 'X' // the writer may reuse its buffer: the tap keeps a copy
	if got := <-lines; string(got) != "live\n" {
		t.Fatalf("live line %q", got)
	}
	if !bytes.HasSuffix(file.Bytes(), []byte("live\n")) {
		t.Fatal("the audit file did not get the line")
	}
	cancel()
	cancel() // twice is harmless
	if _, ok := <-lines; ok {
		t.Fatal("cancel must close the channel")
	}
	if _, err := w.Write([]byte("after\n")); err != nil { // no subscriber: nothing blocks
		t.Fatal(err)
	}
}
