//go:build deadbolt_driver

// Command redlockgo is deadbolt's driver for
// github.com/amyangfei/redlock-go, /v3 or (with the tag redlockgo_v2) /v2,
// at whatever version it is built with (deadbolt run --lock
// redlock-go@v3.X.Y): the library unmodified, its
// RedLock over N independent masters (NewRedLock, SetRetryCount,
// SetRetryDelay, Lock, UnLock; it has no extend), over the go-redis v8
// clients it builds itself from connection strings. go-redis is v8.11.5,
// not the v8.4.4 the library asks for: that one imports an OpenTelemetry
// package (otel/label) that the otel deadbolt's module graph selects has
// no longer.
package main

import (
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
)

func main() {
	os.Exit(client.ServeLibrary(client.Library{Name: "redlock-go", Module: module, New: newLock, Knobs: knobs(),
		Summary: "amyangfei/redlock-go unmodified: Redlock (SET NX PX on each of an odd number of independent masters, given back on all when short of a quorum) over go-redis v8 clients of its own; UnLock by the value it remembers"}))
}
