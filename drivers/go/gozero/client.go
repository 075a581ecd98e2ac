//go:build deadbolt_driver

package main

import (
	"reflect"
	"time"

	redis8 "github.com/go-redis/redis/v8"
	redis9 "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/clients/goredis8"
	"github.com/deadbolt-lab/deadbolt/locks/clients/goredis9"
)

// goZeroMaxRetries is go-zero's own MaxRetries for the go-redis client it
// builds (redisclientmanager.go's maxRetries, the same in every v1
// version read: v1.3.1, v1.10.3). go-zero exposes neither the constant
// nor the client, and takes no option that changes either.
const goZeroMaxRetries = 3

// goZeroClient is what go-zero's client does with a command: go-zero
// builds a go-redis client of the major its own package imports (read
// off GeoLocation, a type it aliases from go-redis) with MaxRetries 3 and
// go-redis's defaults otherwise, so this is what goredis8 or goredis9 say
// of such a client. Its circuit breaker refuses calls without sending
// them; it sends nothing twice.
func goZeroClient() (locks.Behaviour, bool) {
	var b locks.Behaviour
	var longest time.Duration
	var ok bool
	switch reflect.TypeOf(redis.GeoLocation{}).PkgPath() {
	case "github.com/go-redis/redis/v8":
		c := redis8.NewClient(&redis8.Options{Addr: "127.0.0.1:1", MaxRetries: goZeroMaxRetries})
		defer c.Close()
		b = goredis8.Behaviour(c)
		longest, ok = goredis8.SendsOf(c).Longest()
	case "github.com/redis/go-redis/v9":
		c := redis9.NewClient(&redis9.Options{Addr: "127.0.0.1:1", MaxRetries: goZeroMaxRetries})
		defer c.Close()
		b = goredis9.Behaviour(c)
		longest, ok = goredis9.SendsOf(c).Longest()
	default:
		return b, false
	}
	b.LongestCallMS = -1
	if ok {
		// An Acquire or a Release is one script; the grant's read is
		// another, after it.
		b.LongestCallMS = locks.Millis(2 * longest)
	}
	return b, true
}
