// Package rueidisclient is what deadbolt knows of rueidis
// (github.com/redis/rueidis) as the client of a lock library: the settings
// a user sets on its ClientOption (knobs, with rueidis's defaults), how
// they are applied, and what a client with them does with a command
// (locks.Behaviour). rueidis dials as it builds a client, so nothing is
// read off a built one: the defaults are rueidis's exported constants and
// the rules its NewClient documents.
package rueidisclient

import (
	"runtime/debug"
	"time"

	"github.com/redis/rueidis"

	"github.com/deadbolt-lab/deadbolt/locks"
)

// The knobs' names: ClientOption's fields.
const (
	DisableRetry     = "disable_retry"
	ConnWriteTimeout = "conn_write_timeout"
	DialTimeout      = "dial_timeout"
)

// Knobs are rueidis's settings of a client, with rueidis's defaults.
func Knobs() locks.Knobs {
	return locks.Knobs{
		{Name: DisableRetry, Kind: locks.KnobBool, Default: "false",
			Summary: "rueidis DisableRetry: no retryable command (rueidislock's scripts are) is sent again after a connection error"},
		{Name: ConnWriteTimeout, Kind: locks.KnobDuration, Default: defaultConnWriteTimeout(0).String(),
			Summary: "rueidis ConnWriteTimeout: how long a connection may go without an answer (to a command or its PING) before it is closed and its commands fail"},
		{Name: DialTimeout, Kind: locks.KnobDuration, Default: rueidis.DefaultDialTimeout.String(), From: locks.FromTimeout,
			Summary: "rueidis Dialer.Timeout: how long a new connection may take"},
	}
}

// defaultConnWriteTimeout is rueidis's ConnWriteTimeout when none is set:
// ten keep-alive periods (NewClient).
func defaultConnWriteTimeout(keepAlive time.Duration) time.Duration {
	return max(rueidis.DefaultTCPKeepAlive, keepAlive) * 10
}

// Apply sets the knobs the user changed on o; the others keep rueidis's
// defaults.
func Apply(o *rueidis.ClientOption, s locks.Settings) {
	ks := Knobs()
	changed := func(name string) bool {
		k, _ := ks.Get(name)
		return s[name] != "" && s[name] != k.Default
	}
	if changed(DisableRetry) {
		o.DisableRetry = s.Bool(DisableRetry)
	}
	if changed(ConnWriteTimeout) {
		o.ConnWriteTimeout = s.Duration(ConnWriteTimeout)
	}
	if changed(DialTimeout) {
		o.Dialer.Timeout = s.Duration(DialTimeout)
	}
}

// Behaviour is what a client with o does with the lock's commands: a
// reply is awaited as long as the connection answers within
// ConnWriteTimeout (it has no timeout of its own per command; the call's
// context bounds it), and, unless DisableRetry, a command rueidis counts
// retryable (retryable: the lock's are, at this version) that failed on
// the connection is sent again, after a backoff of up to a second, for as
// long as the call's context lasts.
func Behaviour(o rueidis.ClientOption, retryable bool) locks.Behaviour {
	b := locks.Behaviour{Client: "rueidis " + Version(), CallTimeoutMS: locks.Millis(ConnWrite(o))}
	if !o.DisableRetry && retryable {
		b.Retries, b.Resends = -1, true
	}
	return b
}

// ConnWrite is the ConnWriteTimeout a client with o runs with.
func ConnWrite(o rueidis.ClientOption) time.Duration {
	if o.ConnWriteTimeout > 0 {
		return o.ConnWriteTimeout
	}
	return defaultConnWriteTimeout(o.Dialer.KeepAlive)
}

// Version is the rueidis this binary was built with.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/redis/rueidis" {
				if m.Replace != nil && m.Replace.Version != "" {
					return m.Replace.Version
				}
				return m.Version
			}
		}
	}
	return "(version unknown)"
}
