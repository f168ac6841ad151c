package main

import (
	"errors"
	"os"
	"runtime"
	"runtime/pprof"
)

// startCPUProfile profiles this process (the engine runs in it) into path
// until the returned stop is called.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return errors.Join(f.Close(), writeAllocs(path+".allocs"))
	}, nil
}

// writeAllocs writes the process's allocation profile to path, for
// pprof -sample_index=alloc_space: every allocation since the process
// started, sampled. It runs at the end, after the work it shows.
func writeAllocs(path string) error {
	runtime.GC() // the profile shows allocations up to the last collection
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
}
