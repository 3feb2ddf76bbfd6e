package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/mcpregistry"
)

// yamlDoc is agent-tools.yaml as a node tree: registry add and upgrade
// edit the tree, so the file keeps its comments and key order.
type yamlDoc struct {
	root *yaml.Node // the document node
}

func parseDoc(data []byte) (*yamlDoc, error) {
	var root yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &root); err != nil {
			return nil, err
		}
	}
	if root.Kind == 0 {
		root = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the top level is not a mapping of settings")
	}
	return &yamlDoc{root: &root}, nil
}

func (d *yamlDoc) top() *yaml.Node { return d.root.Content[0] }

// providers is the providers: sequence (created when absent or empty).
func (d *yamlDoc) providers(create bool) *yaml.Node {
	m := d.top()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "providers" {
			v := m.Content[i+1]
			if v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == "") && create {
				*v = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", LineComment: v.LineComment}
			}
			if v.Kind != yaml.SequenceNode {
				return nil
			}
			if create && len(v.Content) == 0 {
				v.Style = 0 // providers: [] becomes a block list
			}
			return v
		}
	}
	if !create {
		return nil
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "providers"}, seq)
	return seq
}

func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func (d *yamlDoc) hasID(id string) bool {
	seq := d.providers(false)
	if seq == nil {
		return false
	}
	for _, e := range seq.Content {
		if v := mapGet(e, "id"); v != nil && v.Value == id {
			return true
		}
	}
	return false
}

func (d *yamlDoc) appendProvider(n *yaml.Node) {
	seq := d.providers(true)
	seq.Content = append(seq.Content, n)
}

// replaceProvider puts fresh in old's place, keeping the keys of old that
// the registry does not set (overrides, rename, timeout, ...) and a
// person's enabled: false.
func (d *yamlDoc) replaceProvider(old, fresh *yaml.Node) {
	owned := map[string]bool{"id": true, "kind": true, "description": true, "command": true, "args": true, "env": true,
		"url": true, "headers": true, "pin": true, "enabled": true}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: fresh.HeadComment}
	used := map[string]bool{}
	for i := 0; i+1 < len(old.Content); i += 2 {
		k := old.Content[i].Value
		switch {
		case !owned[k]:
			out.Content = append(out.Content, old.Content[i], old.Content[i+1])
		case k == "enabled" && old.Content[i+1].Value == "false" && mapGet(fresh, "enabled") == nil:
			out.Content = append(out.Content, old.Content[i], old.Content[i+1]) // a person's enabled: false
		case mapGet(fresh, k) != nil:
			out.Content = append(out.Content, str(k), mapGet(fresh, k))
			used[k] = true
		}
	}
	for i := 0; i+1 < len(fresh.Content); i += 2 {
		if k := fresh.Content[i].Value; !used[k] && mapGet(out, k) == nil {
			out.Content = append(out.Content, fresh.Content[i], fresh.Content[i+1])
		}
	}
	*old = *out
}

// The marker comment registry add writes above an entry, which outdated,
// upgrade and the runtime's hold (config.RegistryEntry) read back.
var markerPattern = config.RegistryMarker

type marker struct {
	id, name, version, source string
	node                      *yaml.Node
}

func (d *yamlDoc) marked() []marker {
	seq := d.providers(false)
	if seq == nil {
		return nil
	}
	var out []marker
	for _, e := range seq.Content {
		m := markerPattern.FindStringSubmatch(e.HeadComment)
		id := mapGet(e, "id")
		if m == nil || id == nil {
			continue
		}
		out = append(out, marker{id: id.Value, name: m[1], version: m[2], source: m[3], node: e})
	}
	return out
}

func (d *yamlDoc) encode() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(d.root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// entryNode is the provider entry for plan: kind mcp, pinned, quarantined,
// with the marker comment naming the server, its version and registry.
func entryNode(p *mcpregistry.Plan, id, registry string) (*yaml.Node, error) {
	if p.Bundle != nil && p.Command == "" {
		return nil, fmt.Errorf("%s@%s: the mcpb bundle was not fetched", p.Name, p.Version)
	}
	src := strings.Fields(p.Source)[0]
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map",
		HeadComment: fmt.Sprintf("registry: %s@%s (%s) from %s\nadded by `agent-tools registry add`; `agent-tools registry outdated` compares it with the registry",
			p.Name, p.Version, src, registry)}
	add := func(k string, v *yaml.Node) { m.Content = append(m.Content, str(k), v) }
	add("id", str(id))
	add("kind", str("mcp"))
	if p.Description != "" {
		add("description", str(oneLineText(p.Description, 200)))
	}
	if p.URL != "" {
		add("url", str(p.URL))
	} else {
		add("command", str(p.Command))
		args := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, a := range p.Args {
			args.Content = append(args.Content, str(a))
		}
		add("args", args)
	}
	vars := func(key string, vs []mcpregistry.Var) {
		if len(vs) == 0 {
			return
		}
		mm := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, v := range vs {
			val := str(v.Value)
			val.LineComment = v.Comment
			mm.Content = append(mm.Content, str(v.Key), val)
		}
		add(key, mm)
	}
	vars("env", p.Env)
	vars("headers", p.Headers)
	pin := str("quarantine")
	pin.LineComment = "every tool waits for `agent-tools pins approve`, whatever security.pin says"
	add("pin", pin)
	if len(p.Needs) > 0 || len(p.MissingKeyring) > 0 {
		var todo []string
		if len(p.Needs) > 0 {
			todo = append(todo, "set "+strings.Join(p.Needs, ", ")+" in the environment")
		}
		for _, k := range p.MissingKeyring {
			todo = append(todo, "agent-tools secrets set "+k)
		}
		en := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false",
			LineComment: strings.Join(todo, "; ") + ", then remove this line"}
		add("enabled", en)
	}
	if len(p.Notes) > 0 {
		m.Content[len(m.Content)-1].FootComment = strings.Join(p.Notes, "\n")
	}
	for _, v := range append(append([]mcpregistry.Var{}, p.Env...), p.Headers...) {
		if strings.ContainsAny(v.Value, "\n\r") {
			return nil, fmt.Errorf("%s: a value with a line break: refused", v.Key)
		}
	}
	return m, nil
}

// entryYAML renders the entry alone, as `providers:` would hold it.
func entryYAML(p *mcpregistry.Plan, id, registry string) (string, error) {
	n, err := entryNode(p, id, registry)
	if err != nil {
		return "", err
	}
	d := &yamlDoc{root: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}}
	d.appendProvider(n)
	b, err := d.encode()
	return string(b), err
}

// unifiedDiff is a line diff of two small files (a config), with three
// lines of context around each change.
func unifiedDiff(name, a, b string) string {
	x, y := splitLines(a), splitLines(b)
	// Longest common subsequence table, from the end.
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte
		text string
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, op{' ', x[i]})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i]})
			i++
		default:
			ops = append(ops, op{'+', y[j]})
			j++
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", name, name)
	const ctx = 3
	changed := func(k int) bool { return k >= 0 && k < len(ops) && ops[k].kind != ' ' }
	near := func(k int) bool {
		for d := -ctx; d <= ctx; d++ {
			if changed(k + d) {
				return true
			}
		}
		return false
	}
	gap := false
	for k, o := range ops {
		if !near(k) {
			gap = true
			continue
		}
		if gap && out.Len() > 0 {
			out.WriteString("@@\n")
		}
		gap = false
		out.WriteByte(o.kind)
		out.WriteString(o.text)
		out.WriteByte('\n')
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// The file is edited as text where the node tree says where: the rest of
// the file stays byte for byte as the person wrote it (yaml.v3 would
// re-indent it, move comments and drop blank lines on a full re-encode).
// Only when the layout is one this does not handle (a non-empty flow
// list of providers) is the whole tree re-encoded.

// spliceAppend returns data with entry appended to providers:.
func spliceAppend(data []byte, d *yamlDoc, entry *yaml.Node) ([]byte, error) {
	lines := splitKeep(string(data))
	text, err := renderEntry(entry)
	if err != nil {
		return nil, err
	}
	m := d.top()
	var key, seq *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "providers" {
			key, seq = m.Content[i], m.Content[i+1]
		}
	}
	switch {
	case key == nil || len(data) == 0:
		out := string(data)
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		return []byte(out + "providers:\n" + indent(text, 2)), nil
	case seq.Kind == yaml.SequenceNode && len(seq.Content) > 0 && seq.Style&yaml.FlowStyle == 0:
		first := seq.Content[0]
		col := first.Column - 3 // the dash's column, 0-based: "- " before the first key
		if first.Kind != yaml.MappingNode || col < 0 || first.Line-1 >= len(lines) || len(lines[first.Line-1]) < col+2 || lines[first.Line-1][col:col+2] != "- " {
			break
		}
		end := lastLine(seq.Content[len(seq.Content)-1]) // 1-based, inclusive
		// A list item's trailing lines that are still inside it (more
		// indented than its dash, not a comment).
		for end < len(lines) && strings.TrimSpace(lines[end]) != "" && leading(lines[end]) > col && !strings.HasPrefix(strings.TrimSpace(lines[end]), "#") {
			end++
		}
		return []byte(strings.Join(lines[:end], "") + ensureNL(lines, end) + indent(text, col) + strings.Join(lines[end:], "")), nil
	case (seq.Kind == yaml.SequenceNode && len(seq.Content) == 0) || (seq.Kind == yaml.ScalarNode && (seq.Tag == "!!null" || seq.Value == "")):
		ln := key.Line - 1
		if ln >= len(lines) {
			break
		}
		l := lines[ln]
		head := l[:min(len(l), key.Column-1+len("providers:"))]
		if strings.TrimSpace(head) != "providers:" {
			break
		}
		rest := strings.TrimSpace(strings.TrimSuffix(l[len(head):], "\n"))
		rest = strings.TrimSpace(strings.TrimPrefix(rest, "[]"))
		if rest != "" && !strings.HasPrefix(rest, "#") {
			break
		}
		newKey := head
		if rest != "" {
			newKey += " " + rest
		}
		return []byte(strings.Join(lines[:ln], "") + newKey + "\n" + indent(text, key.Column-1+2) + strings.Join(lines[ln+1:], "")), nil
	}
	d.appendProvider(entry)
	return d.encode()
}

// spliceReplace returns data with the entry old (a node of d) replaced by
// fresh, its head comment included.
func spliceReplace(data []byte, d *yamlDoc, old, fresh *yaml.Node) ([]byte, error) {
	lines := splitKeep(string(data))
	start := old.Line - 1 // the "- id:" line, 0-based
	if start < 0 || start >= len(lines) || old.Column < 3 {
		d.replaceProvider(old, fresh)
		return d.encode()
	}
	col := old.Column - 3 // "- " before the first key
	if !strings.HasPrefix(lines[start][min(col, len(lines[start])):], "- ") {
		d.replaceProvider(old, fresh)
		return d.encode()
	}
	for start > 0 && strings.HasPrefix(strings.TrimSpace(lines[start-1]), "#") && leading(lines[start-1]) == col &&
		headCommentHas(old.HeadComment, strings.TrimSpace(lines[start-1])) {
		start--
	}
	end := lastLine(old)
	for end < len(lines) && strings.TrimSpace(lines[end]) != "" && leading(lines[end]) > col && !strings.HasPrefix(strings.TrimSpace(lines[end]), "#") {
		end++
	}
	clone := *old
	d.replaceProvider(&clone, fresh)
	text, err := renderEntry(&clone)
	if err != nil {
		return nil, err
	}
	return []byte(strings.Join(lines[:start], "") + indent(text, col) + ensureNL(lines, end) + strings.Join(lines[end:], "")), nil
}

func headCommentHas(hc, line string) bool {
	for _, l := range strings.Split(hc, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// renderEntry is the entry as a list item at column 0.
func renderEntry(entry *yaml.Node) (string, error) {
	d := &yamlDoc{root: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}}
	d.appendProvider(entry)
	b, err := d.encode()
	if err != nil {
		return "", err
	}
	s := strings.TrimPrefix(string(b), "providers:\n")
	var out strings.Builder
	for _, l := range splitKeep(s) {
		out.WriteString(strings.TrimPrefix(l, "  "))
	}
	return out.String(), nil
}

func indent(text string, n int) string {
	pad := strings.Repeat(" ", n)
	var out strings.Builder
	for _, l := range splitKeep(text) {
		if strings.TrimSpace(l) != "" {
			out.WriteString(pad)
		}
		out.WriteString(l)
	}
	return out.String()
}

func ensureNL(lines []string, end int) string {
	if end > 0 && end <= len(lines) && !strings.HasSuffix(lines[end-1], "\n") {
		return "\n"
	}
	return ""
}

func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func leading(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// lastLine is the last line (1-based) a node's subtree starts on, plus
// the lines of a multi-line scalar.
func lastLine(n *yaml.Node) int {
	last := n.Line
	if n.Kind == yaml.ScalarNode && (n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0) {
		last += strings.Count(strings.TrimSuffix(n.Value, "\n"), "\n") + 1
	} else if n.Kind == yaml.ScalarNode {
		last += strings.Count(n.Value, "\n") // a multi-line plain or quoted scalar (approximate)
	}
	for _, c := range n.Content {
		if l := lastLine(c); l > last {
			last = l
		}
	}
	return last
}
