package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestLookPathRules(t *testing.T) {
	files := map[string]bool{
		"/usr/bin/node": true, "/opt/bin/npx": true,
		`C:\Program Files\nodejs\npx.cmd`: true, `C:\Program Files\nodejs\node.exe`: true,
		`C:\tools\run.ps1`: true, `C:\tools\run.PS1.BAT`: true, `D:\bin\Tool.EXE`: true,
	}
	isExec := func(p string, _ bool) bool { return files[p] }
	tests := []struct {
		goos, name string
		env        []string
		want       string // "" = not found
	}{
		{"linux", "node", []string{"PATH=/opt/bin:/usr/bin"}, "/usr/bin/node"},
		{"linux", "npx", []string{"PATH=relative:/opt/bin"}, "/opt/bin/npx"},
		{"linux", "npx", []string{"PATH=/usr/bin", "PATH=/opt/bin"}, "/opt/bin/npx"}, // the last one wins
		{"linux", "node", []string{"Path=/usr/bin"}, ""},                             // names are case-sensitive on Unix
		{"linux", "./x", nil, "./x"},
		{"windows", "npx", []string{`Path=C:\Windows;C:\Program Files\nodejs\`}, `C:\Program Files\nodejs\npx.cmd`},
		{"windows", "node", []string{`PATH=C:\Program Files\nodejs`, "PATHEXT=.EXE;.CMD"}, `C:\Program Files\nodejs\node.exe`},
		{"windows", "npx", []string{`PATH=C:\Program Files\nodejs`, "PATHEXT=.EXE"}, ""}, // .cmd not in PATHEXT
		{"windows", "npx.cmd", []string{`PATH=C:\Program Files\nodejs`}, `C:\Program Files\nodejs\npx.cmd`},
		{"windows", "run.ps1", []string{`PATH=C:\tools`}, `C:\tools\run.ps1.bat`},               // .ps1 is not in PATHEXT: extensions appended
		{"windows", "tool", []string{`PATH=relative;D:\bin`, "pathext=exe"}, `D:\bin\tool.exe`}, // case-insensitive names and extensions
		{"windows", `bin\tool`, nil, `bin\tool`},
		{"windows", `C:tool`, nil, `C:tool`},
		{"windows", "npx", []string{`PATH=.;nodejs`}, ""},
		{"windows", "npx", []string{`PATH="C:\Program Files\nodejs";C:\x`}, `C:\Program Files\nodejs\npx.cmd`}, // a quoted entry
	}
	// The fake file system is case-insensitive on Windows, as NTFS is.
	winExec := func(p string, windows bool) bool {
		if !windows {
			return isExec(p, windows)
		}
		for f := range files {
			if strings.EqualFold(f, p) {
				return true
			}
		}
		return false
	}
	for _, tt := range tests {
		got, err := lookPath(tt.name, tt.env, tt.goos, winExec)
		if tt.want == "" {
			if err == nil || !errors.Is(err, exec.ErrNotFound) {
				t.Errorf("%s %q %q: %q, %v; want not found", tt.goos, tt.name, tt.env, got, err)
			}
			continue
		}
		if err != nil || !strings.EqualFold(got, tt.want) {
			t.Errorf("%s %q %q: %q, %v; want %q", tt.goos, tt.name, tt.env, got, err, tt.want)
		}
	}
	if _, err := lookPath("", nil, "windows", winExec); err == nil {
		t.Error("empty name: no error")
	}
}

// On the host, LookPath finds a real executable in the child's PATH only.
func TestLookPathHost(t *testing.T) {
	dir := t.TempDir()
	name, body := "tool", "#!/bin/sh\n"
	if runtime.GOOS == "windows" {
		name, body = "tool.cmd", "@echo off\r\n"
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := LookPath("tool", []string{"PATH=" + dir})
	if err != nil || got != filepath.Join(dir, name) {
		t.Fatalf("%q, %v", got, err)
	}
	if _, err := LookPath("tool", []string{"PATH=" + t.TempDir()}); !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("another PATH: %v", err)
	}
}

func TestMinimalEnvWindows(t *testing.T) {
	host := []string{"Path=C:\\Windows", "SystemRoot=C:\\Windows", "PATHEXT=.EXE;.CMD", "APPDATA=x", "AWS_SECRET_ACCESS_KEY=s", "LC_ALL=C"}
	win := minimalEnv(host, map[string]string{"K": "v"}, "windows")
	want := []string{"APPDATA=x", "K=v", "LC_ALL=C", "PATHEXT=.EXE;.CMD", "Path=C:\\Windows", "SystemRoot=C:\\Windows"}
	if !slices.Equal(win, want) {
		t.Errorf("windows: %q, want %q", win, want)
	}
	if lin := minimalEnv(host, nil, "linux"); !slices.Equal(lin, []string{"LC_ALL=C"}) {
		t.Errorf("linux: %q", lin)
	}
}

// FuzzLookPath: any name and PATH: no panic; a found path is in one of the
// PATH's absolute entries (or is the name itself when it has a separator).
func FuzzLookPath(f *testing.F) {
	f.Add("npx", `C:\a;relative;\\srv\share`, ".CMD;;exe", true)
	f.Add("node", "/usr/bin::/x", "", false)
	f.Fuzz(func(t *testing.T, name, path, pathext string, win bool) {
		goos := "linux"
		if win {
			goos = "windows"
		}
		got, err := lookPath(name, []string{"PATH=" + path, "PATHEXT=" + pathext}, goos, func(string, bool) bool { return true })
		if err != nil {
			return
		}
		if got == name {
			return
		}
		var exts []string
		if win {
			exts = pathExts(pathext)
		}
		for _, dir := range splitList(path, win) {
			for _, c := range candidates(name, exts, win) {
				if isAbs(dir, win) && got == joinPath(dir, c, win) {
					return
				}
			}
		}
		t.Fatalf("%q in %q (%s): %q is not in an absolute entry", name, path, goos, got)
	})
}
