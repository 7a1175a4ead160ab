//go:build !unix

package main

// raiseFileLimit does nothing where there is no RLIMIT_NOFILE.
func raiseFileLimit(uint64) error { return nil }
