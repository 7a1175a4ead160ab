//go:build !unix

package main

import "errors"

// selfCPU is not measured where there is no getrusage.
func selfCPU() (float64, error) { return 0, errors.New("no getrusage here") }
