package sqllogic

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxIncludeDepth stops include cycles.
const maxIncludeDepth = 16

// ParseFile parses a file and splices in the records of every file its
// include records match, in sorted path order, so the runner sees one flat
// list. Included records keep their own file:line with the include site as
// Upper.
func ParseFile(path string) ([]Record, error) {
	return parseFileAt(path, nil, 0)
}

func parseFileAt(path string, upper *Location, depth int) ([]Record, error) {
	if depth > maxIncludeDepth {
		return nil, &ParseError{Loc: *upper, Msg: "includes nested too deep (cycle?)"}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read test file: %w", err)
	}
	recs, err := Parse(path, string(data))
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, r := range recs {
		r.Loc.Upper = upper
		if r.Kind != KindInclude {
			out = append(out, r)
			continue
		}
		files, err := globFiles(filepath.Join(filepath.Dir(path), r.Arg))
		if err != nil {
			return nil, &ParseError{Loc: r.Loc, Msg: err.Error()}
		}
		// sqllogictest-rs silently includes nothing; a typo in an include
		// would then pass vacuously, so we refuse.
		if len(files) == 0 {
			return nil, &ParseError{Loc: r.Loc, Msg: fmt.Sprintf("include %q matches no file", r.Arg)}
		}
		site := r.Loc
		for _, f := range files {
			inc, err := parseFileAt(f, &site, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, inc...)
		}
	}
	return out, nil
}

// globFiles expands a pattern with filepath.Match syntax per path segment,
// plus `**` for any number of directories (as the Rust glob crate does).
// Only regular files are returned, sorted.
func globFiles(pattern string) ([]string, error) {
	pattern = filepath.Clean(pattern)
	if !strings.ContainsAny(pattern, "*?[") {
		if st, err := os.Stat(pattern); err == nil && !st.IsDir() {
			return []string{pattern}, nil
		}
		return nil, nil
	}
	root, rest := splitGlobRoot(pattern)
	segs := strings.Split(rest, string(filepath.Separator))
	for _, s := range segs {
		if _, err := filepath.Match(s, ""); err != nil {
			return nil, fmt.Errorf("invalid include pattern %q: %w", pattern, err)
		}
	}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if matchSegments(segs, strings.Split(rel, string(filepath.Separator))) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expand include %q: %w", pattern, err)
	}
	sort.Strings(out)
	return out, nil
}

// splitGlobRoot splits a pattern into its longest wildcard-free directory
// prefix and the remaining pattern.
func splitGlobRoot(pattern string) (root, rest string) {
	segs := strings.Split(pattern, string(filepath.Separator))
	i := 0
	for i < len(segs)-1 && !strings.ContainsAny(segs[i], "*?[") {
		i++
	}
	root = strings.Join(segs[:i], string(filepath.Separator))
	if root == "" {
		root = "."
		if strings.HasPrefix(pattern, string(filepath.Separator)) {
			root = string(filepath.Separator)
		}
	}
	return root, strings.Join(segs[i:], string(filepath.Separator))
}

// matchSegments matches path segments against pattern segments; `**`
// matches zero or more whole segments.
func matchSegments(pat, path []string) bool {
	if len(pat) == 0 {
		return len(path) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(path); i++ {
			if matchSegments(pat[1:], path[i:]) {
				return true
			}
		}
		return false
	}
	if len(path) == 0 {
		return false
	}
	ok, _ := filepath.Match(pat[0], path[0])
	return ok && matchSegments(pat[1:], path[1:])
}
