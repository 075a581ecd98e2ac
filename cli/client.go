package cli

import (
	"flag"
	"io"
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
	_ "github.com/deadbolt-lab/deadbolt/locks/all" // every lock deadbolt has, by name
)

// cmdClient is `deadbolt client`: the Go driver of the client protocol
// (docs/driver-protocol.md) on stdin and stdout, as deadbolt-client (the
// lean binary the harness runs) serves it; kept for whoever calls it. main
// starts it before the harness's signal handling is set up: a client must
// die of the signals the harness sends it, and its stdout carries nothing
// but protocol lines.
func cmdClient(args []string, stdout, stderr io.Writer) error {
	// No flags: --help says what it is.
	args, err := parse(flag.NewFlagSet("client", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return badInput("deadbolt client takes no arguments: the harness sends everything over stdin")
	}
	if code := client.ServeProcess(os.Stdin, stdout, stderr); code != 0 {
		return exitError{code}
	}
	return nil
}
