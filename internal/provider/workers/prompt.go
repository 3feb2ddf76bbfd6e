package workers

import (
	"strings"
)

// assemblePrompt builds the worker prompt from the request fields alone:
// string assembly, no inference, the same bytes for the same request.
// Paths are the normalised ones.
func assemblePrompt(r *request, allowed, noTouch, relevant []string) string {
	var b strings.Builder
	line := func(s string) { b.WriteString(s); b.WriteByte('\n') }
	section := func(title string) { b.WriteByte('\n'); line("## " + title) }
	list := func(items []string) {
		for _, it := range items {
			line("- " + strings.TrimSpace(it))
		}
	}
	line("# Task")
	line("")
	line(strings.TrimSpace(r.Goal))
	section("Mode")
	switch r.Mode {
	case "analyze":
		line("analyze: read and explain. Do not modify any file.")
	case "review":
		line("review: review the code and report findings. Do not modify any file.")
	default:
		line("implement: make the change. Modify only the files allowed below.")
	}
	if len(relevant) > 0 {
		section("Relevant files")
		list(relevant)
	}
	if r.Mode == "implement" {
		section("Allowed paths (the only files you may change)")
		list(allowed)
	}
	if len(noTouch) > 0 {
		section("Do not touch")
		list(noTouch)
	}
	if c := strings.TrimSpace(r.Contract); c != "" {
		section("Contract")
		line(c)
	}
	if len(r.AcceptanceCriteria) > 0 {
		section("Acceptance criteria")
		list(r.AcceptanceCriteria)
	}
	if len(r.Tests) > 0 {
		section("Tests")
		list(r.Tests)
	}
	section("Answer")
	line("End with a short final report: what you did (or found), the files you changed, the checks you ran and their results, and any concern or blocker.")
	line("Your changes are verified independently from git and the project's checks.")
	return b.String()
}
