//go:build deadbolt_driver

// Command rueidislock is deadbolt's driver for redis/rueidis's rueidislock
// at whatever version it is built with (deadbolt run --lock
// rueidislock@v1.0.X): deadbolt's own rueidis adapter
// (locks/adapters/rueidisadapter, which uses only what rueidis has had
// since v1.0.18) compiled against that version.
package main

import (
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/rueidisadapter"
)

func main() {
	os.Exit(client.ServeLibrary(client.Library{Name: "rueidislock", Module: "github.com/redis/rueidis", New: rueidisadapter.New, TLS: true, Knobs: rueidisadapter.Knobs(),
		Summary: rueidisadapter.Summary}))
}
