//go:build deadbolt_driver

// Command bsm is deadbolt's driver for github.com/bsm/redislock at whatever
// version it is built with (deadbolt run --lock bsm@v0.X.Y): deadbolt's own
// adapter (locks/adapters/bsmadapter) compiled against that version, the
// library unmodified, through the API every version from v0.9.0 has (New, Obtain,
// Lock.Refresh, Lock.Release, Lock.Token) over go-redis v9 clients with
// go-redis's and redislock's own defaults (knobs change them). v0.8 and older import go-redis v8 (or
// github.com/go-redis/redis/v9 betas) and do not build here.
package main

import (
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/bsmadapter"
)

func main() {
	os.Exit(client.ServeLibrary(client.Library{Name: "bsm", Module: "github.com/bsm/redislock", New: bsmadapter.New, TLS: true, Knobs: bsmadapter.Knobs(), Summary: bsmadapter.Summary}))
}
