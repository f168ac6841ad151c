package runtimecfg

import "strings"

// settings are the GODEBUG settings a server runs with.
var settings = []string{"madvdontneed=0"}

// Environ returns env with one GODEBUG: the first env has (the one the
// runtime reads), followed by each of the server's settings it does not
// set itself.
func Environ(env []string) []string {
	out := make([]string, 0, len(env)+1)
	var parts []string
	seen := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			if !seen {
				parts = strings.FieldsFunc(v, func(r rune) bool { return r == ',' })
			}
			seen = true
			continue
		}
		out = append(out, kv)
	}
	for _, s := range settings {
		if !sets(parts, s) {
			parts = append(parts, s)
		}
	}
	return append(out, "GODEBUG="+strings.Join(parts, ","))
}

// Applied reports whether godebug (a process's GODEBUG) sets every key
// the server's settings do.
func Applied(godebug string) bool {
	parts := strings.Split(godebug, ",")
	for _, s := range settings {
		if !sets(parts, s) {
			return false
		}
	}
	return true
}

// sets reports whether one of parts sets setting's key.
func sets(parts []string, setting string) bool {
	key, _, _ := strings.Cut(setting, "=")
	for _, p := range parts {
		if k, _, _ := strings.Cut(p, "="); k == key {
			return true
		}
	}
	return false
}
