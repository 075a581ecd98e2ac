// Command extend is the whole of deadbolt with one lock, one fault, one
// workload and one checker of its own (lock.go, fault.go, workload.go,
// checker.go), each one file and one registration, as a team outside
// deadbolt adds them: its client processes are this binary too.
//
//	go build -o extend . && ./extend run --file scenario.json
package main

import (
	"fmt"
	"os"

	"github.com/deadbolt-lab/deadbolt/cli"
)

func main() {
	if err := cli.ClientsAreThisBinary(); err != nil {
		fmt.Fprintln(os.Stderr, "extend:", err)
		os.Exit(2)
	}
	os.Exit(cli.Main(os.Args[1:]))
}
