//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// raiseFileLimit raises the soft limit on open files to want, or as far
// as the hard limit allows: --subscribers holds a connection, so a
// descriptor, per subscription.
func raiseFileLimit(want uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("read the open files limit: %w", err)
	}
	if l.Cur >= want {
		return nil
	}
	l.Cur = min(want, l.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("raise the open files limit to %d: %w", l.Cur, err)
	}
	if l.Cur < want {
		return fmt.Errorf("open files limited to %d (the hard limit), %d wanted: some subscriptions may fail to open (raise it with ulimit -Hn)", l.Cur, want)
	}
	return nil
}
