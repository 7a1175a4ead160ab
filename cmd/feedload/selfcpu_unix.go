//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// selfCPU is the CPU time feedload has spent so far, user and system, in
// seconds: the load tool's share of the cores it shares with feedd and
// Redis on one machine.
func selfCPU() (float64, error) {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return sec(u.Utime) + sec(u.Stime), nil
}
