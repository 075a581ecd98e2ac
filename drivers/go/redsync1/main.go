//go:build deadbolt_driver

// Command redsync1 is deadbolt's driver for github.com/go-redsync/redsync,
// the module before /v4 (deadbolt run --lock redsync@v1.X.Y): the library
// unmodified, through the API of v1.2 and v1.3 (New, NewMutex, Lock, and
// Unlock and Extend that answer a bool), over the redigo pools redigo documents, at its defaults (no timeouts).
package main

import (
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
)

func main() {
	os.Exit(client.ServeLibrary(client.Library{Name: "redsync", Module: "github.com/go-redsync/redsync", New: newLock, TLS: true, Knobs: knobs(),
		Summary: "go-redsync/redsync (v1) unmodified over redigo: one pool per independent master (Redlock on N), Extend"}))
}
