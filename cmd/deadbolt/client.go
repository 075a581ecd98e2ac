package main

import (
	"flag"
	"io"
	"os"
	"runtime"

	"github.com/deadbolt-lab/deadbolt/client"
	_ "github.com/deadbolt-lab/deadbolt/locks/all" // every lock deadbolt has, by name
)

// cmdClient is `deadbolt client`: the Go driver of the client protocol
// (docs/driver-protocol.md) on stdin and stdout. main starts it before the
// harness's signal handling is set up: a client must die of the signals
// the harness sends it, and its stdout carries nothing but protocol lines.
func cmdClient(args []string, stdout, stderr io.Writer) error {
	// No flags: --help says what it is.
	args, err := parse(flag.NewFlagSet("client", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return badInput("deadbolt client takes no arguments: the harness sends everything over stdin")
	}
	// One thread runs the client's goroutines, unless GOMAXPROCS says
	// otherwise: a suite runs dozens of clients on two cores, and a lock
	// waits on Redis, not on the CPU; a second P only adds idle threads
	// that spin and wake up, each wake-up a system call that a
	// paravirtualized machine pays dearly for (pause-node-simple's
	// harness and clients used 7.6 s and 6.7 s of CPU with one, 12.9 s
	// without).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if code := client.Serve(os.Stdin, stdout, stderr); code != 0 {
		return exitError{code}
	}
	return nil
}
