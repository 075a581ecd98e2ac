//go:build deadbolt_driver

// Command gozero is deadbolt's driver for go-zero's RedisLock
// (github.com/zeromicro/go-zero/core/stores/redis) at whatever version it
// is built with (deadbolt run --lock gozero@v1.X.Y): the library
// unmodified, through the API every v1.3+ version has (New, WithPass,
// NewRedisLock, SetExpire, Acquire, Release). A keepalive is Acquire again
// on the RedisLock that holds the key, as go-zero's users renew it.
package main

import (
	"os"

	"github.com/deadbolt-lab/deadbolt/client"
)

func main() {
	os.Exit(client.ServeLibrary(client.Library{Name: "gozero", Module: "github.com/zeromicro/go-zero", New: newLock,
		Summary: "go-zero's RedisLock unmodified on one independent master: SET NX PX (a Lua script from v1.3.2), Acquire again to keep it"}))
}
