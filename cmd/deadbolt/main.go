// Command deadbolt runs lock scenarios against real Redis containers and
// checks their histories: the CLI of package cli, with every lock, fault,
// workload and checker deadbolt has. `deadbolt help` lists the commands.
package main

import (
	"os"

	"github.com/deadbolt-lab/deadbolt/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
