package rueidisclient_test

import (
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/clients/rueidisclient"
)

func TestRueidisRetriesUnlessToldNot(t *testing.T) {
	ks := rueidisclient.Knobs()
	require.NoError(t, ks.Check())
	s, err := ks.Resolve(nil, locks.Options{})
	require.NoError(t, err)
	var o rueidis.ClientOption
	rueidisclient.Apply(&o, s)
	require.False(t, o.DisableRetry)
	require.Zero(t, o.ConnWriteTimeout, "a default stays rueidis's own to fill")
	b := rueidisclient.Behaviour(o, true)
	require.True(t, b.Resends)
	require.False(t, rueidisclient.Behaviour(o, false).Resends, "a command rueidis does not count retryable is sent once")
	require.Equal(t, -1, b.Retries, "for as long as the call's context lasts")
	require.EqualValues(t, 10000, b.CallTimeoutMS, "ten keep-alive periods of a second")

	s, err = ks.Resolve(map[string]string{rueidisclient.DisableRetry: "true", rueidisclient.ConnWriteTimeout: "2s"}, locks.Options{Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	o = rueidis.ClientOption{}
	rueidisclient.Apply(&o, s)
	require.True(t, o.DisableRetry)
	require.Equal(t, 300*time.Millisecond, o.Dialer.Timeout, "the scenario's call timeout bounds the dial")
	b = rueidisclient.Behaviour(o, true)
	require.False(t, b.Resends)
	require.Zero(t, b.Retries)
	require.EqualValues(t, 2000, b.CallTimeoutMS)
}
