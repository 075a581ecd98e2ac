package goredis9_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/clients/goredis9"
)

// client builds the client a README builds (an address, nothing else)
// with the knobs given.
func client(t *testing.T, given map[string]string) redis.UniversalClient {
	t.Helper()
	s, err := goredis9.Knobs().Resolve(given, locks.Options{})
	require.NoError(t, err)
	o := &redis.Options{Addr: "127.0.0.1:1"}
	goredis9.ConfigOf(s).Client(o)
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestTheDefaultsAreGoRedisOwn(t *testing.T) {
	ks := goredis9.Knobs()
	require.NoError(t, ks.Check())
	k, _ := ks.Get(goredis9.MaxRetries)
	require.Equal(t, "3", k.Default, "go-redis sends a failed command three more times")
	k, _ = ks.Get(goredis9.ReadTimeout)
	require.Equal(t, "5s", k.Default)
	require.Equal(t, locks.FromTimeout, k.From, "a scenario's call timeout is the client's read timeout")

	b := goredis9.Behaviour(client(t, nil))
	require.True(t, b.Resends)
	require.Equal(t, 3, b.Retries)
	require.EqualValues(t, 5000, b.CallTimeoutMS)
	require.Contains(t, b.Client, "go-redis v9.")
	longest, ok := goredis9.SendsOf(client(t, nil)).Longest()
	require.True(t, ok)
	require.Equal(t, 4*(5+5)*time.Second+3*time.Second, longest, "four sends, each waiting out both timeouts, three backoffs of a second")
}

func TestTheBehaviourFollowsTheKnobs(t *testing.T) {
	b := goredis9.Behaviour(client(t, map[string]string{goredis9.MaxRetries: "-1", goredis9.ReadTimeout: "200ms"}))
	require.False(t, b.Resends, "MaxRetries -1: each command is sent once")
	require.Zero(t, b.Retries)
	require.EqualValues(t, 200, b.CallTimeoutMS)
	s := goredis9.SendsOf(client(t, map[string]string{goredis9.ReadTimeout: "200ms"}))
	require.Equal(t, 200*time.Millisecond, s.Write, "an unset write timeout follows the read timeout, as go-redis has it")

	b = goredis9.Behaviour(client(t, map[string]string{goredis9.ReadTimeout: "-1"}))
	require.EqualValues(t, -1, b.CallTimeoutMS, "ReadTimeout -1: a reply is awaited for ever")
	_, ok := goredis9.SendsOf(client(t, map[string]string{goredis9.ReadTimeout: "-1"})).Longest()
	require.False(t, ok)

	co := &redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}
	s2, err := goredis9.Knobs().Resolve(map[string]string{goredis9.MaxRetries: "1"}, locks.Options{})
	require.NoError(t, err)
	goredis9.ConfigOf(s2).Cluster(co)
	cc := redis.NewClusterClient(co)
	defer cc.Close()
	require.Equal(t, 2*4, goredis9.SendsOf(cc).Tries, "two sends on a node, for each of four redirects")
}
