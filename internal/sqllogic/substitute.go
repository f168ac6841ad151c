package sqllogic

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// substitution expands variables in SQL and shell text. With `control
// substitution on` it expands $__TEST_DIR__, $__NOW__, $__DATABASE__, let
// variables and environment variables ($NAME, ${NAME}, ${NAME:default}),
// with \$ for a literal dollar, and an unknown name is an error. When it is
// off, only variables bound by let are expanded and everything else is left
// alone, so $1 and $$-quoting pass through untouched.
type substitution struct {
	on      bool
	vars    map[string]string
	testDir string
}

func (s *substitution) bind(name, value string) {
	if s.vars == nil {
		s.vars = map[string]string{}
	}
	s.vars[name] = value
}

// close removes the file's scratch directory.
func (s *substitution) close() {
	if s.testDir != "" {
		_ = os.RemoveAll(s.testDir)
		s.testDir = ""
	}
}

func (s *substitution) expand(text, path, database string) (string, error) {
	if !s.on && len(s.vars) == 0 {
		return text, nil
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if s.on && c == '\\' && i+1 < len(text) && text[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if c != '$' {
			b.WriteByte(c)
			continue
		}
		name, def, hasDef, n := scanVar(text[i+1:])
		if n == 0 {
			b.WriteByte(c)
			continue
		}
		val, ok, err := s.lookup(name, database)
		if err != nil {
			return "", err
		}
		switch {
		case ok:
			b.WriteString(val)
		case hasDef && s.on:
			b.WriteString(def)
		case s.on:
			return "", fmt.Errorf("%s: undefined variable $%s", path, name)
		default:
			b.WriteString(text[i : i+1+n])
		}
		i += n
	}
	return b.String(), nil
}

// scanVar reads NAME or {NAME} or {NAME:default} after a '$'; n is the
// number of bytes consumed (0: not a variable).
func scanVar(s string) (name, def string, hasDef bool, n int) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return "", "", false, 0
		}
		name = s[1:end]
		if k := strings.IndexByte(name, ':'); k >= 0 {
			name, def, hasDef = name[:k], name[k+1:], true
		}
		if identLen(name) != len(name) || name == "" {
			return "", "", false, 0
		}
		return name, def, hasDef, end + 1
	}
	k := identLen(s)
	return s[:k], "", false, k
}

// identLen is the length of the [A-Za-z_][A-Za-z0-9_]* prefix of s.
func identLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return i
		}
	}
	return len(s)
}

func (s *substitution) lookup(name, database string) (string, bool, error) {
	if v, ok := s.vars[name]; ok {
		return v, true, nil
	}
	if !s.on {
		return "", false, nil
	}
	switch name {
	case "__TEST_DIR__":
		if s.testDir == "" {
			dir, err := os.MkdirTemp("", "sluice-slt-")
			if err != nil {
				return "", false, fmt.Errorf("make $__TEST_DIR__: %w", err)
			}
			s.testDir = dir
		}
		return s.testDir, true, nil
	case "__NOW__":
		return strconv.FormatInt(time.Now().UnixNano(), 10), true, nil
	case "__DATABASE__":
		return database, true, nil
	}
	v, ok := os.LookupEnv(name)
	return v, ok, nil
}
