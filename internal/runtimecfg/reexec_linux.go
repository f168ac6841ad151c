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
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, Environ(os.Environ()))
}
