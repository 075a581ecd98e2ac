package endpoints_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// A retry after an attempt that may have run leaves the command's outcome
// unknown; replies, redirects and failed dials prove nothing ran.
func TestOnlyAnAttemptThatMayHaveRunCastsDoubt(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{redis.Nil, false},
		{redisErr("MOVED 449 redis-4:6379"), false},
		{redisErr("CLUSTERDOWN The cluster is down"), false},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, false},
		{redis.ErrPoolTimeout, false},
		{io.EOF, true},
		{&net.OpError{Op: "read", Err: errors.New("i/o timeout")}, true},
		{context.DeadlineExceeded, true},
	} {
		require.Equal(t, c.want, endpoints.MayHaveRun(c.err), "%v", c.err)
	}
}

// redisErr is an error reply as go-redis gives it.
func redisErr(msg string) error {
	cmd := redis.NewStatusCmd(context.Background())
	cmd.SetErr(replyError(msg))
	return cmd.Err()
}

type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}
