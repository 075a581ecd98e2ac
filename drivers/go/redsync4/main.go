// Command redsync4 is deadbolt's driver for github.com/go-redsync/redsync/v4
// at whatever version it is built with (deadbolt run --lock
// redsync@v4.X.Y): the library unmodified, through the API every v4
// version has (New, NewMutex, LockContext, UnlockContext, ExtendContext),
// over the go-redis pool its README builds (client_goredis*.go).
package main

import (
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
)

func main() {
	os.Exit(client.ServeLibrary(client.Library{Name: "redsync", Module: module, New: newLock, TLS: true, Knobs: knobs(),
		Summary: "go-redsync/redsync/v4 unmodified over the go-redis its README builds (v8 to v4.8.0, v9 from v4.8.1), both at their defaults: one pool per master group (single instance on sentinel, Redlock on N masters), Extend"}))
}

const module = "github.com/go-redsync/redsync/v4"
