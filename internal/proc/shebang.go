package proc

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path"
	"strings"
)

// maxShebang bounds the first line read: kernels cap it too (Linux: 256
// bytes); a longer one is no interpreter line.
const maxShebang = 256

// errNoShebang says a file does not start with an interpreter line.
var errNoShebang = errors.New("no #! line")

// Shebang reads the interpreter line of the script at file and returns the
// command that runs it without the kernel's help (Windows has none): the
// interpreter's base name and its arguments, the script path to be added
// after them by the caller. "#!/usr/bin/env python3 -u" gives
// [python3 -u]; "#!/bin/sh" gives [sh]. The interpreter is named by base
// name so that it is looked up on PATH (Git for Windows' sh, python3.exe);
// a CR before the newline (a script saved with Windows line endings) is
// not part of it.
func Shebang(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, maxShebang+16).Peek(maxShebang)
	if err != nil && len(line) == 0 {
		return nil, errNoShebang
	}
	return ParseShebang(line)
}

// ParseShebang is Shebang on the file's first bytes (table-tested and
// fuzzed apart from the file system).
func ParseShebang(head []byte) ([]string, error) {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return nil, errNoShebang
	}
	end := bytes.IndexByte(head, '\n')
	if end < 0 {
		if len(head) >= maxShebang {
			return nil, errors.New("#! line longer than 256 bytes")
		}
		end = len(head)
	}
	line := strings.TrimRight(string(head[2:end]), "\r")
	if strings.ContainsRune(line, 0) {
		return nil, errors.New("#! line holds a NUL byte")
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, errors.New("#! line names no interpreter")
	}
	interp := path.Base(strings.ReplaceAll(fields[0], `\`, "/"))
	args := fields[1:]
	if interp == "env" {
		// env's own options (-S splits the rest, as it already is here).
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			args = args[1:]
		}
		if len(args) == 0 {
			return nil, errors.New("#!/usr/bin/env names no program")
		}
		interp, args = path.Base(args[0]), args[1:]
	}
	if interp == "." || interp == "/" || interp == "" {
		return nil, errors.New("#! line names no interpreter")
	}
	return append([]string{interp}, args...), nil
}
