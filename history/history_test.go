package history_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

func TestRecordThenReadRoundTrips(t *testing.T) {
	var buf bytes.Buffer
	rec := history.NewRecorder(&buf)
	rec.Record(history.Op{Type: history.Invoke, Process: 0, F: history.Acquire, Key: "k", Lease: "p0.1", TTL: 1e9})
	rec.Record(history.Op{Type: history.OK, Process: 0, F: history.Acquire, Key: "k", Lease: "p0.1", Owner: "a", TTL: 1e9, Deadline: 9e8})
	rec.Record(history.Op{Type: history.Invoke, Process: 0, F: history.Write, Key: "k", Lease: "p0.1", Value: history.Int(0)})
	rec.Record(history.Op{Type: history.OK, Process: 0, F: history.Write, Key: "k", Lease: "p0.1", Value: history.Int(0), Prev: history.Int(7)})
	rec.Record(history.Op{Type: history.Invoke, Process: history.NemesisProcess, F: history.FaultStart, Fault: "kill-primary", Node: "redis-1"})
	rec.Record(history.Op{Type: history.OK, Process: history.NemesisProcess, F: history.FaultStart, Fault: "kill-primary", Node: "redis-1"})
	require.NoError(t, rec.Err())

	ops, err := history.Parse(&buf)
	require.NoError(t, err)
	require.Equal(t, rec.Ops(), ops)
	pairs, err := history.Pair(ops)
	require.NoError(t, err)
	require.Len(t, pairs, 3)
	require.Equal(t, int64(7), *pairs[1].Complete.Prev, "a zero value and a prev survive the round trip")
	require.Equal(t, int64(0), *pairs[1].Invoke.Value)
	require.Equal(t, history.OK, pairs[0].Outcome())
}

func TestUnfinishedOperationIsInfo(t *testing.T) {
	rec := history.NewRecorder(nil)
	rec.Record(history.Op{Type: history.Invoke, Process: 3, F: history.Release, Key: "k", Lease: "p3.1", Owner: "a"})
	pairs, err := history.Pair(rec.Ops())
	require.NoError(t, err)
	require.Nil(t, pairs[0].Complete)
	require.Equal(t, history.Info, pairs[0].Outcome())
}

func TestCorruptHistoriesAreRejectedWithTheLine(t *testing.T) {
	for name, tc := range map[string]struct{ text, err string }{
		"not json":      {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}` + "\n{oops\n", "line 2: not a history operation"},
		"unknown type":  {`{"index":0,"time":1,"type":"maybe","process":0,"f":"acquire","key":"k","lease":"p0.1"}`, `line 1: unknown type "maybe"`},
		"unknown field": {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1","colour":1}`, "line 1: not a history operation"},
		"index gap":     {`{"index":1,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}`, "line 1: index 1, want 0"},
		"no key":        {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","lease":"p0.1"}`, "line 1: acquire without a key"},
		"no lease":      {`{"index":0,"time":1,"type":"invoke","process":0,"f":"release","key":"k","owner":"a"}`, "line 1: release without a lease id"},
		"negative ttl":  {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1","ttl":-5}`, "line 1: negative ttl"},
		"bad process":   {`{"index":0,"time":1,"type":"invoke","process":-3,"f":"read","key":"k"}`, "numbered from 0"},
		"harness locks": {`{"index":0,"time":1,"type":"invoke","process":-2,"f":"acquire","key":"k","lease":"p0.1"}`, "on the harness process"},
		"lease mismatch": {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}` + "\n" +
			`{"index":1,"time":2,"type":"ok","process":0,"f":"acquire","key":"k","lease":"p0.2","owner":"a"}`, "does not match invocation"},
		"done before invoked": {`{"index":0,"time":5,"type":"invoke","process":0,"f":"renew","key":"k","lease":"p0.1","stamp":"client"}` + "\n" +
			`{"index":1,"time":4,"type":"ok","process":0,"f":"renew","key":"k","lease":"p0.1","stamp":"client"}`, "before its invocation"},
		"orphan complete": {`{"index":0,"time":1,"type":"ok","process":0,"f":"acquire","key":"k","lease":"p0.1","owner":"a"}`, "never invoked"},
		"empty":           {"\n", "empty history"},
		"ok acquire without owner": {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1","ttl":5}` + "\n" +
			`{"index":1,"time":2,"type":"ok","process":0,"f":"acquire","key":"k","lease":"p0.1","owner":"","ttl":5}` + "\n", "line 2: ok acquire without an owner"},
		"negative deadline": {`{"index":0,"time":1,"type":"ok","process":0,"f":"renew","key":"k","lease":"p0.1","deadline":-1}`, "line 1: negative deadline"},
		"negative ttl on a completion": {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}` + "\n" +
			`{"index":1,"time":2,"type":"ok","process":0,"f":"acquire","key":"k","lease":"p0.1","owner":"a","ttl":-1}` + "\n", "line 2: negative ttl"},
		"corrupt line in the middle": {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}` + "\n" +
			`{"index":1,"time":2,"ty` + "\n" + `{"index":1,"time":2,"type":"fail","process":0,"f":"acquire","key":"k","lease":"p0.1"}` + "\n", "line 2: not a history operation"},
		"unknown field on an unterminated last line": {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}` + "\n" +
			`{"index":1,"time":2,"type":"fail","process":0,"f":"acquire","key":"k","lease":"p0.1","colour":1}`, "line 2: not a history operation"},
		"two operations on a line":     {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}{"index":1}` + "\n", "line 1: not a history operation"},
		"cut before anything complete": {`{"index":0,"time":1,"ty`, "empty history: line 1, the last, was cut short"},
		"time backwards": {`{"index":0,"time":5,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}` + "\n" +
			`{"index":1,"time":4,"type":"ok","process":0,"f":"acquire","key":"k","lease":"p0.1","owner":"a"}`, "line 2: time goes backwards"},
		"double invoke": {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}` + "\n" +
			`{"index":1,"time":2,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}`, "op 1: process 0 invoked again while op 0 is open"},
		"next on an ok": {`{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1"}` + "\n" +
			`{"index":1,"time":2,"type":"ok","process":0,"f":"acquire","key":"k","lease":"p0.1","owner":"a","next":3}`, "only a client's info completion names its successor"},
		"next to an earlier process": {`{"index":0,"time":1,"type":"invoke","process":4,"f":"acquire","key":"k","lease":"p4.1"}` + "\n" +
			`{"index":1,"time":2,"type":"info","process":4,"f":"acquire","key":"k","lease":"p4.1","next":3}`, "a later process"},
		"orphan completion names the process": {`{"index":0,"time":1,"type":"fail","process":3,"f":"release","key":"k","lease":"p3.1"}`,
			"op 0: process 3 completes an operation that was never invoked"},
		"orphan nemesis completion": {`{"index":0,"time":1,"type":"ok","process":-1,"f":"fault-end","fault":"kill","fault_id":"f9"}`,
			"op 0: the nemesis's fault-end of kill f9 completes an operation that was never invoked"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := history.Parse(strings.NewReader(tc.text))
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// Client-stamped events arrive a little after they happened: their times may
// precede operations recorded before them, which harness times never do.
func TestClientStampedEventsMayArriveLate(t *testing.T) {
	var buf bytes.Buffer
	rec := history.NewRecorder(&buf)
	sent := rec.FromMono(history.MonoNow())
	for rec.Now() < sent+int64(time.Millisecond) {
		// the release is recorded well after the renewal was sent
	}
	rec.Record(history.Op{Type: history.Invoke, Process: 0, F: history.Release, Key: "k", Lease: "p0.1"})
	rec.RecordStamped(history.Op{Type: history.Invoke, Process: 1, F: history.Renew, Key: "k", Lease: "p0.1"}, sent)
	rec.RecordStamped(history.Op{Type: history.OK, Process: 1, F: history.Renew, Key: "k", Lease: "p0.1"}, rec.FromMono(history.MonoNow()))
	ops, err := history.Parse(&buf)
	require.NoError(t, err)
	require.Less(t, ops[1].Time, ops[0].Time, "the renewal was sent before the release was recorded")
	require.Equal(t, history.StampClient, ops[1].Stamp)
	require.LessOrEqual(t, ops[2].Time, rec.Now())
}

func TestWatchDeliversTheFirstMatchOnce(t *testing.T) {
	rec := history.NewRecorder(nil)
	acquired := func(op history.Op) bool { return op.F == history.Acquire && op.Type == history.OK && op.Key == "k" }
	first, cancel := rec.Watch(acquired)
	defer cancel()
	rec.Record(history.Op{Type: history.Invoke, Process: 0, F: history.Acquire, Key: "k", Lease: "p0.1"})
	rec.Record(history.Op{Type: history.OK, Process: 0, F: history.Acquire, Key: "j", Lease: "p0.1"})
	select {
	case op := <-first:
		t.Fatalf("no match yet, got %+v", op)
	default:
	}
	rec.Record(history.Op{Type: history.OK, Process: 2, F: history.Acquire, Key: "k", Lease: "p2.1"})
	rec.Record(history.Op{Type: history.OK, Process: 3, F: history.Acquire, Key: "k", Lease: "p3.1"})
	require.Equal(t, 2, (<-first).Process)
	select {
	case op := <-first:
		t.Fatalf("delivered twice: %+v", op)
	default:
	}
}

// Each fault instance gets an id from the recorder, and overlapping
// instances of one fault pair by it, whatever order their steps finish in.
func TestOverlappingFaultInstancesPairApart(t *testing.T) {
	rec := history.NewRecorder(nil)
	start := func() history.Op {
		return rec.Record(history.Op{Type: history.Invoke, Process: history.NemesisProcess, F: history.FaultStart, Fault: "pause-node"})
	}
	a, b := start(), start()
	require.Equal(t, "f0", a.FaultID)
	require.Equal(t, "f1", b.FaultID)
	for _, id := range []string{b.FaultID, a.FaultID} {
		rec.Record(history.Op{Type: history.OK, Process: history.NemesisProcess, F: history.FaultStart, Fault: "pause-node", FaultID: id})
	}
	pairs, err := history.Pair(rec.Ops())
	require.NoError(t, err)
	require.Len(t, pairs, 2)
	for _, p := range pairs {
		require.NotNil(t, p.Complete)
		require.Equal(t, p.Invoke.FaultID, p.Complete.FaultID)
	}
	require.Equal(t, 3, pairs[0].Complete.Index, "the first instance completed second")
}

// A crash while writing leaves the last line without its newline and not
// a whole operation: Scan checks every complete line and says where the
// history was cut; Parse, which promises a whole history, refuses it.
func TestCutLastLineIsReportedNotFatal(t *testing.T) {
	whole := `{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1","ttl":5}` + "\n" +
		`{"index":1,"time":2,"type":"ok","process":0,"f":"acquire","key":"k","lease":"p0.1","owner":"a","ttl":5}` + "\n"
	cut := whole + `{"index":2,"time":3,"type":"inv`
	var got []history.Op
	tail, err := history.Scan(strings.NewReader(cut), func(op *history.Op, _ int) error {
		got = append(got, *op)
		return nil
	})
	require.NoError(t, err)
	require.True(t, tail.Cut())
	require.Equal(t, 3, tail.CutLine)
	require.Len(t, got, 2, "every complete line is read")
	require.Contains(t, tail.String(), "line 3, the last, was cut short")

	_, err = history.Parse(strings.NewReader(cut))
	require.ErrorContains(t, err, "line 3, the last, was cut short")

	tail, err = history.Scan(strings.NewReader(whole), func(*history.Op, int) error { return nil })
	require.NoError(t, err)
	require.False(t, tail.Cut())
	// A complete last operation without its newline is whole.
	ops, err := history.Parse(strings.NewReader(strings.TrimSuffix(whole, "\n")))
	require.NoError(t, err)
	require.Len(t, ops, 2)
}

// Lines are decoded in batches on several CPUs; errors still name their
// line, and a scan stopped early by its caller or by a bad line ends.
func TestScanAcrossBatches(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, historytest.WriteJSONL(&buf, historytest.Generate(historytest.Config{Seed: 3, Keys: 4, Clients: 8, Ops: 5000}).Ops))
	lines := strings.SplitAfter(buf.String(), "\n")
	n := 0
	_, err := history.Scan(strings.NewReader(buf.String()), func(op *history.Op, _ int) error {
		require.Equal(t, n, op.Index, "in order")
		n++
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, len(lines)-1, n)

	bad := slices.Clone(lines)
	bad[2999] = `{"index":2999,"oops":1}` + "\n"
	_, err = history.Scan(strings.NewReader(strings.Join(bad, "")), func(*history.Op, int) error { return nil })
	require.ErrorContains(t, err, "line 3000: not a history operation")

	stop := errors.New("enough")
	seen := 0
	_, err = history.Scan(strings.NewReader(buf.String()), func(*history.Op, int) error {
		if seen++; seen == 10 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	require.Equal(t, 10, seen)
}

// Batches are read straight from the reader in blocks, the part line at a
// block's end carried to the next: whatever sizes the reader hands out,
// blank and CRLF lines count as lines, a bad line is named by its number,
// a line longer than a block is read whole and one longer than 16MB is
// refused by number.
func TestScanReadsLinesWhateverTheReadSizes(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, historytest.WriteJSONL(&buf, historytest.Generate(historytest.Config{Seed: 4, Keys: 3, Clients: 6, Ops: 3000}).Ops))
	lines := strings.SplitAfter(buf.String(), "\n")
	lines = lines[:len(lines)-1]
	// A blank line after line 10, and CRLF endings from line 20 on.
	mixed := append(slices.Clone(lines[:10]), "\n")
	for _, l := range lines[10:] {
		mixed = append(mixed, strings.TrimSuffix(l, "\n")+"\r\n")
	}
	text := strings.Join(mixed, "")
	for name, r := range map[string]func() io.Reader{
		"whole":       func() io.Reader { return strings.NewReader(text) },
		"byte a time": func() io.Reader { return iotest.OneByteReader(strings.NewReader(text)) },
		"half blocks": func() io.Reader { return iotest.HalfReader(strings.NewReader(text)) },
	} {
		n := 0
		_, err := history.Scan(r(), func(op *history.Op, _ int) error {
			require.Equal(t, n, op.Index, name)
			n++
			return nil
		})
		require.NoError(t, err, name)
		require.Equal(t, len(lines), n, name)
	}
	bad := slices.Clone(mixed)
	bad[2500] = `{"index":2499,"oops":1}` + "\n"
	_, err := history.Scan(iotest.HalfReader(strings.NewReader(strings.Join(bad, ""))), func(*history.Op, int) error { return nil })
	require.ErrorContains(t, err, "line 2501: not a history operation", "the blank line counts")

	long := `{"index":0,"time":1,"type":"invoke","process":0,"f":"acquire","key":"k","lease":"p0.1","ttl":5,"owner":"` + strings.Repeat("x", 300<<10) + `"}` + "\n"
	n := 0
	_, err = history.Scan(iotest.HalfReader(strings.NewReader(long)), func(op *history.Op, _ int) error {
		n++
		require.Len(t, op.Owner, 300<<10)
		return nil
	})
	require.NoError(t, err, "a line longer than a block is read whole")
	require.Equal(t, 1, n)

	huge := lines[0] + strings.Repeat(" ", 17<<20) + "\n"
	_, err = history.Scan(strings.NewReader(huge), func(*history.Op, int) error { return nil })
	require.ErrorContains(t, err, "line 2: longer than 16MB")
}
