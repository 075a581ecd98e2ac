// Command redsync4 is deadbolt's driver for github.com/go-redsync/redsync/v4
// at whatever version it is built with (deadbolt run --lock
// redsync@v4.X.Y): the library unmodified, through the API every v4
// version has (New, NewMutex, LockContext, UnlockContext, ExtendContext),
// over its go-redis v8 pool.
package main

import (
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
)

func main() {
	os.Exit(client.ServeLibrary(client.Library{Name: "redsync", Module: "github.com/go-redsync/redsync/v4", New: newLock, TLS: true,
		Summary: "go-redsync/redsync/v4 unmodified over go-redis v8: one pool per master group (single instance on sentinel, Redlock on N masters), Extend"}))
}
