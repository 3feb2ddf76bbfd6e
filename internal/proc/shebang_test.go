package proc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseShebang(t *testing.T) {
	for _, c := range []struct {
		head string
		want []string
		err  string
	}{
		{"#!/bin/sh\necho hi\n", []string{"sh"}, ""},
		{"#!/usr/bin/env python3 -u\nprint(1)", []string{"python3", "-u"}, ""},
		{"#!/usr/bin/env -S node --no-warnings\n", []string{"node", "--no-warnings"}, ""},
		{"#! /bin/bash -e\r\nset -x\r\n", []string{"bash", "-e"}, ""},
		{"#!C:\\Git\\bin\\sh.exe\n", []string{"sh.exe"}, ""}, // a Windows path: its base name, looked up on PATH
		{"#!/usr/bin/python3", []string{"python3"}, ""},
		{"echo no interpreter\n", nil, "no #! line"},
		{"", nil, "no #! line"},
		{"#!\n", nil, "names no interpreter"},
		{"#!   \r\n", nil, "names no interpreter"},
		{"#!/usr/bin/env\n", nil, "names no program"},
		{"#!/usr/bin/env -i\n", nil, "names no program"},
		{"#!/bin/sh\x00x\n", nil, "NUL"},
		{"#!/" + strings.Repeat("a", 300), nil, "longer than 256"},
	} {
		got, err := ParseShebang([]byte(c.head))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseShebang(%q) = %v, %v; want error %q", c.head, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseShebang(%q) = %q, %v; want %q", c.head, got, err, c.want)
		}
	}
}

func TestShebangFile(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "greet")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env bash\r\necho hi\r\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Shebang(script); err != nil || !slices.Equal(got, []string{"bash"}) {
		t.Fatalf("Shebang = %q, %v", got, err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Shebang(empty); err == nil {
		t.Fatal("an empty file has an interpreter")
	}
	if _, err := Shebang(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing file has an interpreter")
	}
}

func FuzzParseShebang(f *testing.F) {
	for _, s := range []string{"#!/bin/sh\n", "#!/usr/bin/env -S a b\r\n", "#!", "x", "#!/usr/bin/env\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		got, err := ParseShebang(head)
		if err != nil {
			return
		}
		if len(got) == 0 || got[0] == "" || strings.ContainsAny(got[0], "/\n\r\x00") {
			t.Fatalf("ParseShebang(%q) = %q: no usable interpreter", head, got)
		}
	})
}
