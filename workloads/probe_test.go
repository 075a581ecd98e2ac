package workloads

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A probe acquire that ran out of time says the cluster was slow; one
// that failed for a reason of its own says the driver does not fit.
func TestAProbeTellsASlowClusterFromAnUnfitDriver(t *testing.T) {
	for _, msg := range []string{
		"context deadline exceeded; undoing it: context deadline exceeded",
		"read tcp 127.0.0.1:47742->127.0.0.1:39311: i/o timeout",
		"redis.exceptions.TimeoutError: Timeout reading from socket",
		"socket.timeout: timed out",
	} {
		assert.True(t, timedOut(msg), msg)
	}
	for _, msg := range []string{
		"MasterNotFoundError: No master found for 'deadbolt' : {('127.0.0.1', 26379): AuthenticationError('Authentication required.')}",
		"NOAUTH Authentication required.",
		"WRONGPASS invalid username-password pair or user is disabled.",
		"redis: all sentinels specified in configuration are unreachable",
		"x509: certificate signed by unknown authority",
		"lock not acquired",
	} {
		assert.False(t, timedOut(msg), msg)
	}
}
