//go:build deadbolt_driver

// Command redsync4 is deadbolt's driver for github.com/go-redsync/redsync/v4
// at whatever version it is built with (deadbolt run --lock
// redsync@v4.X.Y): deadbolt's own adapter (locks/adapters/redsyncadapter)
// compiled against that version, the library unmodified, through the API every v4
// version has (New, NewMutex, LockContext, UnlockContext, ExtendContext),
// over the go-redis pool its README builds (client_goredis*.go).
package main

import (
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/redsyncadapter"
)

func main() {
	os.Exit(client.ServeLibrary(client.Library{Name: "redsync", Module: redsyncadapter.Module, New: redsyncadapter.New, TLS: true,
		Knobs: redsyncadapter.Knobs(), Summary: redsyncadapter.Summary}))
}
