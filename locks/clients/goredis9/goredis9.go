// Package goredis9 is what deadbolt knows of go-redis v9
// (github.com/redis/go-redis/v9) as the client of a lock library: the
// settings a user sets on it (knobs, with the defaults go-redis gives
// them, read off a client built with nothing set), how they are applied
// to the options a library's README builds, and what a client built with
// them does with a command (locks.Behaviour). Every driver over go-redis
// v9 goes through this one package, so that what a lock declares of its
// client is read from that client, never written per driver.
package goredis9

import (
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/deadbolt-lab/deadbolt/locks"
)

// The knobs' names: go-redis's option fields, as its URLs name them.
const (
	MaxRetries         = "max_retries"
	ReadTimeout        = "read_timeout"
	WriteTimeout       = "write_timeout"
	DialTimeout        = "dial_timeout"
	PoolSize           = "pool_size"
	ContextTimeout     = "context_timeout_enabled"
	MaintNotifications = "maint_notifications"
)

// Knobs are go-redis v9's settings of a client, with go-redis's defaults.
func Knobs() locks.Knobs { return knobs() }

var knobs = sync.OnceValue(func() locks.Knobs {
	c := redis.NewClient(&redis.Options{})
	defer c.Close()
	o := c.Options()
	maint := string(maintnotifications.ModeAuto)
	if o.MaintNotificationsConfig != nil && o.MaintNotificationsConfig.Mode != "" {
		maint = string(o.MaintNotificationsConfig.Mode)
	}
	return locks.Knobs{
		{Name: MaxRetries, Kind: locks.KnobInt, Default: strconv.Itoa(o.MaxRetries),
			Summary: "go-redis MaxRetries: how many more times a command that failed on the connection, or timed out, is sent (0: go-redis's default; -1: never)"},
		{Name: ReadTimeout, Kind: locks.KnobDuration, Default: o.ReadTimeout.String(), From: locks.FromTimeout,
			Summary: "go-redis ReadTimeout: how long a command waits for its reply (-1: for ever)"},
		{Name: WriteTimeout, Kind: locks.KnobDuration, Default: o.WriteTimeout.String(), From: locks.FromTimeout,
			Summary: "go-redis WriteTimeout (0: the read timeout)"},
		{Name: DialTimeout, Kind: locks.KnobDuration, Default: o.DialTimeout.String(), From: locks.FromTimeout,
			Summary: "go-redis DialTimeout: how long a new connection may take"},
		{Name: PoolSize, Kind: locks.KnobInt, Default: strconv.Itoa(o.PoolSize),
			Summary: "go-redis PoolSize: connections per node (default 10 per GOMAXPROCS)"},
		{Name: ContextTimeout, Kind: locks.KnobBool, Default: strconv.FormatBool(o.ContextTimeoutEnabled),
			Summary: "go-redis ContextTimeoutEnabled: a call's context deadline also cuts its reads and writes"},
		{Name: MaintNotifications, Kind: locks.KnobChoice, Default: maint,
			Choices: []string{string(maintnotifications.ModeDisabled), string(maintnotifications.ModeEnabled), string(maintnotifications.ModeAuto)},
			Summary: "go-redis MaintNotificationsConfig.Mode (Redis Enterprise's maintenance notifications; a Sentinel client has none)"},
	}
})

// Config is the knobs a user changed, to apply to a client's options:
// every other field keeps go-redis's own default (a WriteTimeout left
// zero follows the ReadTimeout, as go-redis has it).
type Config struct{ s locks.Settings }

// ConfigOf reads the client's knobs from a lock's settings.
func ConfigOf(s locks.Settings) Config { return Config{s} }

func (c Config) changed(name string) bool {
	k, _ := Knobs().Get(name)
	v, ok := c.s[name]
	return ok && v != k.Default
}

// fields are the option fields the knobs set, in any of go-redis's
// option types.
type fields struct {
	maxRetries, poolSize *int
	read, write, dial    *time.Duration
	contextTimeout       *bool
	maint                **maintnotifications.Config
}

func (c Config) apply(f fields) {
	if c.changed(MaxRetries) {
		*f.maxRetries = c.s.Int(MaxRetries)
	}
	if c.changed(PoolSize) {
		*f.poolSize = c.s.Int(PoolSize)
	}
	for name, p := range map[string]*time.Duration{ReadTimeout: f.read, WriteTimeout: f.write, DialTimeout: f.dial} {
		if c.changed(name) {
			*p = c.s.Duration(name)
		}
	}
	if c.changed(ContextTimeout) {
		*f.contextTimeout = c.s.Bool(ContextTimeout)
	}
	if f.maint != nil && c.changed(MaintNotifications) {
		*f.maint = &maintnotifications.Config{Mode: maintnotifications.Mode(c.s.String(MaintNotifications))}
	}
}

// Client applies the knobs to a single node's client options.
func (c Config) Client(o *redis.Options) {
	c.apply(fields{&o.MaxRetries, &o.PoolSize, &o.ReadTimeout, &o.WriteTimeout, &o.DialTimeout, &o.ContextTimeoutEnabled, &o.MaintNotificationsConfig})
	o.MaintNotificationsConfig = logicalEndpoint(o.MaintNotificationsConfig, o.TLSConfig != nil)
}

// logicalEndpoint is the maintenance-notification config with the endpoint
// type go-redis would detect for the published port (127.0.0.1, a private
// address): its detection resolves the address's host name as the client
// is built, and deadbolt names every node by a logical name no resolver
// knows (redis-1), which against a resolver that does not answer took 2 s
// a client. The type matters only to a server with maintenance
// notifications (Redis Enterprise); every server deadbolt runs refuses
// the handshake, and auto mode then turns them off, as it would for a user.
func logicalEndpoint(m *maintnotifications.Config, tls bool) *maintnotifications.Config {
	if m != nil && m.Mode == maintnotifications.ModeDisabled {
		return m
	}
	out := maintnotifications.Config{Mode: maintnotifications.ModeAuto}
	if m != nil {
		out = *m
	}
	if out.EndpointType == "" || out.EndpointType == maintnotifications.EndpointTypeAuto {
		out.EndpointType = maintnotifications.EndpointTypeInternalIP
		if tls {
			out.EndpointType = maintnotifications.EndpointTypeInternalFQDN
		}
	}
	return &out
}

// Failover applies them to a Sentinel failover client's options.
func (c Config) Failover(o *redis.FailoverOptions) {
	c.apply(fields{&o.MaxRetries, &o.PoolSize, &o.ReadTimeout, &o.WriteTimeout, &o.DialTimeout, &o.ContextTimeoutEnabled, nil})
}

// Cluster applies them to a Redis Cluster client's options.
func (c Config) Cluster(o *redis.ClusterOptions) {
	c.apply(fields{&o.MaxRetries, &o.PoolSize, &o.ReadTimeout, &o.WriteTimeout, &o.DialTimeout, &o.ContextTimeoutEnabled, &o.MaintNotificationsConfig})
	o.MaintNotificationsConfig = logicalEndpoint(o.MaintNotificationsConfig, o.TLSConfig != nil)
}

// Sends is what a built client does with one command: how many times it
// sends it at most, how long each send waits for a reply (0: for ever),
// the longest backoff between two, and whether a call's context cuts a
// send short.
type Sends struct {
	Tries          int
	Read, Write    time.Duration
	MaxBackoff     time.Duration
	ContextTimeout bool
}

// SendsOf reads a built client's options (go-redis's defaults filled).
func SendsOf(c redis.UniversalClient) Sends {
	switch x := c.(type) {
	case *redis.Client:
		o := x.Options()
		return Sends{Tries: o.MaxRetries + 1, Read: bound(o.ReadTimeout), Write: bound(o.WriteTimeout), MaxBackoff: o.MaxRetryBackoff, ContextTimeout: o.ContextTimeoutEnabled}
	case *redis.ClusterClient:
		o := x.Options()
		// Each node's client retries, and the cluster client sends again
		// after a redirect or a failure, MaxRedirects times.
		return Sends{Tries: (o.MaxRetries + 1) * (o.MaxRedirects + 1), Read: bound(o.ReadTimeout), Write: bound(o.WriteTimeout), MaxBackoff: o.MaxRetryBackoff, ContextTimeout: o.ContextTimeoutEnabled}
	}
	return Sends{Tries: 1}
}

// bound is a normalized go-redis timeout: <= 0 is none (0 here).
func bound(d time.Duration) time.Duration { return max(d, 0) }

// Longest is the longest one command may take, every send waiting its
// timeouts out and every backoff at its longest; false when a send may
// wait for ever.
func (s Sends) Longest() (time.Duration, bool) {
	if s.Read == 0 || s.Write == 0 {
		return 0, false
	}
	return time.Duration(s.Tries)*(s.Read+s.Write) + time.Duration(s.Tries-1)*s.MaxBackoff, true
}

// Behaviour is what the built client does with a command, as a lock over
// it declares it; the lock adds what its library does (its tries, its
// renewals, its longest call).
func Behaviour(c redis.UniversalClient) locks.Behaviour {
	s := SendsOf(c)
	return locks.Behaviour{Client: "go-redis v" + redis.Version(), Retries: s.Tries - 1, Resends: s.Tries > 1, CallTimeoutMS: locks.Millis(s.Read)}
}
