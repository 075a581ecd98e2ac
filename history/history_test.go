package history_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func TestRecordThenReadRoundTrips(t *testing.T) {
	var buf bytes.Buffer
	rec := history.NewRecorder(&buf)
	rec.Record(history.Op{Type: history.Invoke, Process: 0, F: history.Acquire, Key: "k", TTL: 1e9})
	rec.Record(history.Op{Type: history.OK, Process: 0, F: history.Acquire, Key: "k", Owner: "a", TTL: 1e9, Deadline: 9e8})
	rec.Record(history.Op{Type: history.Invoke, Process: history.NemesisProcess, F: history.FaultStart, Fault: "kill-primary", Node: "redis-1"})
	rec.Record(history.Op{Type: history.OK, Process: history.NemesisProcess, F: history.FaultStart, Fault: "kill-primary", Node: "redis-1"})
	require.NoError(t, rec.Err())

	ops, err := history.Read(&buf)
	require.NoError(t, err)
	require.Equal(t, rec.Ops(), ops)
	pairs, err := history.Pair(ops)
	require.NoError(t, err)
	require.Len(t, pairs, 2)
	require.Equal(t, history.OK, pairs[0].Outcome())
}

func TestUnfinishedOperationIsInfo(t *testing.T) {
	rec := history.NewRecorder(nil)
	rec.Record(history.Op{Type: history.Invoke, Process: 3, F: history.Release, Key: "k", Owner: "a"})
	pairs, err := history.Pair(rec.Ops())
	require.NoError(t, err)
	require.Nil(t, pairs[0].Complete)
	require.Equal(t, history.Info, pairs[0].Outcome())
}

func TestCorruptHistoriesAreRejectedWithTheLine(t *testing.T) {
	for name, tc := range map[string]struct{ text, err string }{
		"not json":        {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k"}` + "\n{oops", "line 2: not a history operation"},
		"unknown type":    {`{"index":0,"time":1,"type":"maybe","process":0,"f":"acquire","key":"k"}`, `line 1: unknown type "maybe"`},
		"unknown field":   {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","colour":1}`, "line 1: not a history operation"},
		"index gap":       {`{"index":1,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k"}`, "line 1: index 1, want 0"},
		"no key":          {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire"}`, "line 1: acquire without a key"},
		"orphan complete": {`{"index":0,"time":1,"type":"ok","process":0,"f":"acquire","key":"k"}`, "never invoked"},
		"empty":           {"\n", "empty history"},
		"time backwards": {`{"index":0,"time":5,"type":"invoke","process":0,"f":"acquire","key":"k"}` + "\n" +
			`{"index":1,"time":4,"type":"ok","process":0,"f":"acquire","key":"k"}`, "line 2: time goes backwards"},
		"double invoke": {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k"}` + "\n" +
			`{"index":1,"time":2,"type":"invoke","process":0,"f":"acquire","key":"k"}`, "invoked again"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := history.Read(strings.NewReader(tc.text))
			require.ErrorContains(t, err, tc.err)
		})
	}
}
