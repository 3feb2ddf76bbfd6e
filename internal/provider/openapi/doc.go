package openapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/state"
)

const (
	// maxDocument bounds a document read from a file or a URL.
	maxDocument = 64 << 20
	// maxDepth bounds the nesting of objects and arrays in a document:
	// kin-openapi's time grows with the square of the depth (3,000 nested
	// "items" in 75 KB took 22 s and 267 MB), and real descriptions stay
	// far below.
	maxDepth = 64
	// cacheFresh is how long a fetched document is used without asking
	// again; an older copy is still used when the URL is unreachable.
	cacheFresh = 24 * time.Hour
)

// LoadError is a document that could not be loaded: where it failed and why.
type LoadError struct {
	Spec string // the file or URL
	Msg  string
}

func (e *LoadError) Error() string {
	return "openapi document " + redact.URL(e.Spec) + ": " + redact.String(e.Msg)
}

// readDocument returns the document's bytes: a file, or a URL fetched once
// and cached on disk (fresh for a day; a stale copy serves when the URL is
// down, with a warning).
func (p *Provider) readDocument(ctx context.Context) ([]byte, string, error) {
	spec := p.opts.Spec
	if !strings.Contains(spec, "://") {
		f, err := os.Open(spec)
		if err != nil {
			return nil, "", &LoadError{spec, fmt.Sprintf("cannot read: %v", errors.Unwrap(err))}
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxDocument+1))
		if err != nil {
			return nil, "", &LoadError{spec, fmt.Sprintf("cannot read: %v", err)}
		}
		if len(data) > maxDocument {
			return nil, "", &LoadError{spec, fmt.Sprintf("larger than %d MiB", maxDocument>>20)}
		}
		return data, "", nil
	}
	cache := p.cachePath()
	var stale []byte
	if cache != "" {
		if st, err := os.Stat(cache); err == nil {
			if data, err := os.ReadFile(cache); err == nil {
				if time.Since(st.ModTime()) < cacheFresh {
					return data, "", nil
				}
				stale = data
			}
		}
	}
	data, err := p.fetchDocument(ctx)
	if err != nil {
		if stale != nil {
			return stale, fmt.Sprintf("%v; using the copy cached at %s", err, cache), nil
		}
		return nil, "", err
	}
	if cache != "" {
		if werr := writeFileAtomic(cache, data); werr != nil {
			return data, fmt.Sprintf("document not cached: %v", werr), nil
		}
	}
	return data, "", nil
}

func (p *Provider) fetchDocument(ctx context.Context) ([]byte, error) {
	spec := p.opts.Spec
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, spec, nil)
	if err != nil {
		return nil, &LoadError{spec, err.Error()}
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	resp, err := p.doc.Do(req)
	if err != nil {
		return nil, &LoadError{spec, "unreachable: " + p.scrub(errText(err))}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, &LoadError{spec, fmt.Sprintf("fetching it answered HTTP %d", resp.StatusCode)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, &LoadError{spec, "reading it: " + p.scrub(errText(err))}
	}
	if len(data) > maxDocument {
		return nil, &LoadError{spec, fmt.Sprintf("larger than %d MiB", maxDocument>>20)}
	}
	return data, nil
}

// errText is an HTTP client error without Go's "Get \"url\": " prefix.
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// cachePath is <CacheDir>/<id>-<digest of the URL>.json ("" when there is
// no cache directory).
func (p *Provider) cachePath() string {
	dir := p.cacheDir()
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(p.opts.Spec))
	return filepath.Join(dir, p.opts.ID+"-"+hex.EncodeToString(sum[:8])+".doc")
}

// cacheDir is Options.CacheDir, else os.UserCacheDir()/agent-tools/openapi
// ("" when there is none).
func (p *Provider) cacheDir() string {
	if p.opts.CacheDir != "" {
		return p.opts.CacheDir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "agent-tools", "openapi")
}

// writeFileAtomic is state.WriteFile: the one atomic, synced write.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return state.WriteFile(path, data)
}

// parseDocument parses an OpenAPI 3.0 or 3.1 document, JSON or YAML, with
// kin-openapi. References are not resolved here: each operation resolves
// its own, so one bad $ref skips one operation, not the document.
func parseDocument(spec string, data []byte) (*openapi3.T, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) == 0 {
		return nil, &LoadError{spec, "is empty"}
	}
	if trimmed[0] != '{' {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, &LoadError{spec, "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
		}
		j, err := json.Marshal(jsonable(v))
		if err != nil {
			return nil, &LoadError{spec, "YAML that has no JSON form: " + err.Error()}
		}
		if len(j) > maxDocument {
			// Aliases can make the JSON form far larger than the file.
			return nil, &LoadError{spec, fmt.Sprintf("larger than %d MiB once its YAML aliases are expanded", maxDocument>>20)}
		}
		data = j
	} else if !json.Valid(trimmed) {
		var v any
		err := json.Unmarshal(trimmed, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, int64(len(data)-len(trimmed))+se.Offset-1) // Offset is just past the bad byte
			return nil, &LoadError{spec, fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, se)}
		}
		return nil, &LoadError{spec, fmt.Sprintf("invalid JSON: %v", err)}
	}
	if off := tooDeep(data, maxDepth); off >= 0 {
		where := ""
		if trimmed[0] == '{' {
			line, col := lineCol(data, int64(off))
			where = fmt.Sprintf(" at line %d, column %d", line, col)
		}
		return nil, &LoadError{spec, fmt.Sprintf("nested deeper than %d levels%s (objects and arrays); an API description needs far fewer", maxDepth, where)}
	}
	var head struct {
		OpenAPI any `json:"openapi"`
		Swagger any `json:"swagger"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, &LoadError{spec, "not an OpenAPI document (want a JSON or YAML object at the top)"}
	}
	ver, _ := head.OpenAPI.(string)
	switch {
	case head.Swagger != nil:
		return nil, &LoadError{spec, "is Swagger 2.0; convert it to OpenAPI 3 (for example with swagger2openapi)"}
	case !strings.HasPrefix(ver, "3."):
		return nil, &LoadError{spec, fmt.Sprintf(`has no "openapi": "3.x" version field (got %s)`, clipText(fmt.Sprint(head.OpenAPI), 40))}
	}
	doc := &openapi3.T{}
	if err := doc.UnmarshalJSON(data); err != nil {
		return nil, &LoadError{spec, "malformed OpenAPI: " + clipText(err.Error(), 300)}
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, &LoadError{spec, "has no paths (no operations to offer)"}
	}
	return doc, nil
}

// tooDeep returns the offset in the JSON text data where nesting of
// objects and arrays first exceeds limit, or -1. It only counts brackets
// outside strings; data has been checked to be valid JSON.
func tooDeep(data []byte, limit int) int {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > limit {
				return i
			}
		case '}', ']':
			depth--
		}
	}
	return -1
}

// jsonable turns YAML maps with non-string keys into JSON objects.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// serverURL picks the base URL: the configured one, else servers[0] (its
// variables at their defaults; a relative URL resolved against a fetched
// document's own URL).
func serverURL(spec, configured string, doc *openapi3.T) (*url.URL, error) {
	raw := configured
	if raw == "" {
		if len(doc.Servers) == 0 || doc.Servers[0] == nil || doc.Servers[0].URL == "" {
			return nil, &LoadError{spec, `has no servers[0].url; set "baseURL" in the config`}
		}
		s := doc.Servers[0]
		raw = s.URL
		for name, v := range s.Variables {
			if v != nil {
				raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
			}
		}
		if ref, err := url.Parse(raw); err == nil && !ref.IsAbs() {
			base, berr := url.Parse(spec)
			if berr != nil || !base.IsAbs() {
				return nil, &LoadError{spec, fmt.Sprintf(`servers[0].url %q is relative; set "baseURL" in the config`, raw)}
			}
			raw = base.ResolveReference(ref).String()
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &LoadError{spec, fmt.Sprintf("base URL %q is not an http(s) URL with a host", redact.MaskURL(raw))}
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, &LoadError{spec, fmt.Sprintf("base URL %q must not carry a query, fragment or user info", redact.MaskURL(raw))}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}
