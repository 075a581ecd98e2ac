package workloads

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// A read back that some nodes did not answer names them, so that the
// checker can tell a node the run's own fault had killed; a node that
// answered with the token is the finding, whatever the others said.
func TestAReadBackNamesTheNodesThatDidNotAnswer(t *testing.T) {
	read := func(values map[string]string, unanswered map[string]error) history.Op {
		rec := history.NewRecorder(io.Discard)
		r := &Runner{cfg: Config{Rec: rec, Inspect: func(context.Context, string) (map[string]string, map[string]error) { return values, unanswered }}}
		r.inspect(context.Background(), "k0", "p1.1", "tok")
		ops := rec.Ops()
		require.Len(t, ops, 2)
		require.Equal(t, history.Inspect, ops[0].F)
		return ops[1]
	}
	done := read(map[string]string{"redis-2": "other"}, map[string]error{"redis-3": errors.New("i/o timeout"), "redis-1": io.EOF})
	require.Equal(t, history.Info, done.Type)
	require.Equal(t, "redis-1,redis-3", done.Node)
	require.Equal(t, "redis-1: EOF; redis-3: i/o timeout", done.Error)
	require.Empty(t, done.Owner)

	done = read(map[string]string{"redis-2": "tok"}, map[string]error{"redis-1": io.EOF})
	require.Equal(t, history.OK, done.Type)
	require.Equal(t, "tok", done.Owner)
	require.Equal(t, "redis-2", done.Node)

	done = read(map[string]string{}, nil)
	require.Equal(t, history.OK, done.Type)
	require.Empty(t, done.Node)
}
