//go:build unix

package server

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used so far (user and system),
// or 0 when it cannot be read.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
