// Command deadbolt-client is deadbolt's own Go client: one lock user,
// started by the harness (deadbolt run, deadbolt scenario), serving the
// driver protocol (docs/driver-protocol.md) on stdin and stdout over every
// lock deadbolt has. It is nothing but that, so that each client process
// starts small and fast; `deadbolt client` serves the same protocol from
// the whole deadbolt binary.
//
//	deadbolt-client            (started by the harness)
//	deadbolt-client --help
//
// It takes no arguments: the harness sends everything over stdin. Bad
// input exits 254.
package main

import (
	"fmt"
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
	_ "github.com/deadbolt-lab/deadbolt/locks/all" // every lock deadbolt has, by name
)

const usage = `usage of deadbolt-client:
  deadbolt-client    one lock user process, started by the harness: the driver
                     protocol (docs/driver-protocol.md) on stdin and stdout over
                     every lock deadbolt has; it takes no arguments
`

const exitBadInput = 254

func main() {
	switch {
	case len(os.Args) == 2 && (os.Args[1] == "--help" || os.Args[1] == "-help" || os.Args[1] == "-h"):
		fmt.Print(usage)
		return
	case len(os.Args) > 1:
		fmt.Fprintf(os.Stderr, "deadbolt-client takes no arguments (got %q): the harness sends everything over stdin\n%s", os.Args[1:], usage)
		os.Exit(exitBadInput)
	}
	os.Exit(client.ServeProcess(os.Stdin, os.Stdout, os.Stderr))
}
