package runtimecfg

import (
	"os"
	"syscall"
)

// Reexec replaces the process with itself under the server's settings,
// unless its GODEBUG already has them; it returns only when it does not
// (or cannot) replace it, and the process runs on as it is.
func Reexec() {
	if Applied(os.Getenv("GODEBUG")) {
		return
	}
	env := Environ(os.Environ())
	// The running binary itself, even if its path was replaced or removed.
	_ = syscall.Exec("/proc/self/exe", os.Args, env)
	if exe, err := os.Executable(); err == nil {
		_ = syscall.Exec(exe, os.Args, env)
	}
}
