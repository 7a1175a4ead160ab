package main

import (
	"flag"
	"io"
	"net"
)

// cmdOptions is what a command gets from its caller besides its
// arguments: where its report goes and, for a caller that runs commands
// in-process (the tests), what it may watch. main sets stdout alone.
type cmdOptions struct {
	stdout io.Writer
	// flagSetMade, when set, learns each flag set a command defines, before
	// it parses: how the flag table of the README is checked against them.
	flagSetMade func(*flag.FlagSet)
	// listening, when set, learns the address of each listener a command
	// opens once it accepts connections: listenerPublic (serve's GraphQL
	// address) or listenerOps (--ops-addr).
	listening func(listener string, addr net.Addr)
}

// The listeners cmdOptions.listening names.
const (
	listenerPublic = "public"
	listenerOps    = "ops"
)

// flagSet makes a subcommand's flag set.
func (o cmdOptions) flagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if o.flagSetMade != nil {
		o.flagSetMade(fs)
	}
	return fs
}

// listened tells o.listening, if set, that listener accepts at addr.
func (o cmdOptions) listened(listener string, addr net.Addr) {
	if o.listening != nil {
		o.listening(listener, addr)
	}
}
