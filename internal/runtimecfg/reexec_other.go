//go:build !linux

package runtimecfg

// Reexec does nothing off Linux, where the settings change nothing.
func Reexec() {}
