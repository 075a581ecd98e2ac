package client

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// built records the settings the knobbed test lock was last built with.
var built struct {
	sync.Mutex
	last locks.Settings
}

type knobbedLock struct {
	locks.Lock
	s locks.Settings
}

func (k knobbedLock) Behaviour() locks.Behaviour {
	return locks.Behaviour{Client: "test-client", Retries: k.s.Int("max_retries"), Resends: k.s.Int("max_retries") > 0,
		CallTimeoutMS: locks.Millis(k.s.Duration("read_timeout"))}
}

func init() {
	locks.Register("test-knobs", "TEST: simple over a client with knobs", func(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
		l, err := locks.New("simple", e, locks.Options{TTL: o.TTL})
		built.Lock()
		built.last = o.Settings
		built.Unlock()
		return knobbedLock{l, o.Settings}, err
	})
	locks.RegisterKnobs("test-knobs", locks.Knobs{
		{Name: "max_retries", Kind: locks.KnobInt, Default: "3", Summary: "resends"},
		{Name: "read_timeout", Kind: locks.KnobDuration, Default: "3s", From: locks.FromTimeout, Summary: "reply wait"},
	})
}

// talk serves the knobbed lock and sends reqs, returning the replies.
func talk(t *testing.T, reqs ...Request) []Reply {
	t.Helper()
	var in strings.Builder
	for i, r := range reqs {
		r.ID = int64(i + 1)
		b, err := json.Marshal(r)
		require.NoError(t, err)
		in.Write(append(b, '\n'))
	}
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- serve(strings.NewReader(in.String()), pw, io.Discard, "test", map[string]locks.Declaration{"test-knobs": locks.Declare("test-knobs")})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var out []Reply
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"event"`) {
			continue
		}
		var r Reply
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		out = append(out, r)
	}
	require.Equal(t, 0, <-done)
	return out
}

func TestDeclareAnswersTheLockAsItsOptionsMakeIt(t *testing.T) {
	rs := talk(t,
		Request{Op: OpDeclare, Lock: "test-knobs", TTLMS: 1000},
		Request{Op: OpDeclare, Lock: "test-knobs", TTLMS: 1000, Options: &LockOptions{TimeoutMS: 200, Library: map[string]string{"max_retries": "0"}}},
		Request{Op: OpDeclare, Lock: "test-knobs", TTLMS: 1000, Options: &LockOptions{Library: map[string]string{"nosuch": "1"}}},
		Request{Op: OpDeclare, Lock: "test-knobs", TTLMS: 1000, Options: &LockOptions{Library: map[string]string{"max_retries": "lots"}}},
		Request{Op: OpDeclare, Lock: "simple", TTLMS: 1000, Options: &LockOptions{Library: map[string]string{"max_retries": "0"}}},
	)
	require.Len(t, rs, 5)
	def := rs[0]
	require.Equal(t, OutcomeOK, def.Outcome, def.Error)
	require.True(t, def.LockInfo.Resends)
	require.EqualValues(t, 3000, def.LockInfo.CallTimeoutMS)
	require.Empty(t, def.LockInfo.Settings)
	require.Len(t, def.LockInfo.Options, 2)

	set := rs[1]
	require.Equal(t, OutcomeOK, set.Outcome, set.Error)
	require.False(t, set.LockInfo.Resends, "max_retries=0: no command sent twice")
	require.EqualValues(t, 200, set.LockInfo.CallTimeoutMS, "timeout_ms sets the read timeout, the knob that takes it")
	require.Equal(t, []string{"max_retries=0", "read_timeout=200ms"}, set.LockInfo.Settings)

	require.Equal(t, OutcomeFail, rs[2].Outcome)
	require.Contains(t, rs[2].Error, `unknown lock option "nosuch" (known: max_retries, read_timeout)`)
	require.Equal(t, OutcomeFail, rs[3].Outcome)
	require.Contains(t, rs[3].Error, `"lots" is no value of max_retries`)
	require.Equal(t, OutcomeFail, rs[4].Outcome)
	require.Contains(t, rs[4].Error, "this lock takes no options")
}

func TestOpenGivesTheLockItsSettings(t *testing.T) {
	e := endpoints.Unreachable(1)
	rs := talk(t, Request{Op: OpOpen, Lock: "test-knobs", TTLMS: 1000, Endpoints: &e, Options: &LockOptions{Library: map[string]string{"read_timeout": "250ms"}}})
	require.Equal(t, OutcomeOK, rs[0].Outcome, rs[0].Error)
	built.Lock()
	require.Equal(t, locks.Settings{"max_retries": "3", "read_timeout": "250ms"}, built.last, "the default, and the knob the open set")
	built.Unlock()
	rs = talk(t, Request{Op: OpOpen, Lock: "test-knobs", TTLMS: 1000, Endpoints: &e, Options: &LockOptions{Library: map[string]string{"nosuch": "1"}}})
	require.Equal(t, OutcomeFail, rs[0].Outcome)
	require.Contains(t, rs[0].Error, "unknown lock option")
}
