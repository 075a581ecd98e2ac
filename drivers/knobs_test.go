package drivers_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// stall is a Redis that answers a connection's handshake and never
// answers a command that names the lock's key: it counts how many times
// each such command was sent, which is what a client's retries and a
// library's tries decide.
type stall struct {
	ln  net.Listener
	key string

	mu   sync.Mutex
	sent map[string]int // by command name, upper case
}

func newStall(t *testing.T, key string) *stall {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &stall{ln: ln, key: key, sent: map[string]int{}}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go s.serve(c)
		}
	}()
	return s
}

func (s *stall) serve(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		name := strings.ToUpper(args[0])
		named := false
		for _, a := range args[1:] {
			named = named || a == s.key
		}
		switch {
		case named:
			s.mu.Lock()
			s.sent[name]++
			s.mu.Unlock()
		case name == "HELLO":
			io.WriteString(c, "-ERR unknown command 'HELLO'\r\n")
		default:
			io.WriteString(c, "+OK\r\n")
		}
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return strings.Fields(line), nil // an inline command
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	args := make([]string, n)
	for i := range args {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(head[1:]))
		if err != nil {
			return nil, err
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

func (s *stall) count(names ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, name := range names {
		n += s.sent[name]
	}
	return n
}

// A knob changes what the driver does, as the library's own setting
// would: against a node that never answers the lock's command, the number
// of times the driver sends it is what the client's retries and the
// library's tries set, at their defaults and at the value given.
func TestKnobsChangeWhatTheDriverDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds drivers through the module proxy")
	}
	for _, c := range []struct {
		lock string
		// base are knobs both runs share (a timeout short enough for a
		// test: some libraries wait for ever by default); knob is set in
		// the second run only.
		base       map[string]string
		knob, to   string
		commands   []string
		sent, then int
	}{
		// go-redis's MaxRetries (3) sends the timed-out obtain script
		// four times; -1 once.
		{"bsm@v0.9.4", map[string]string{"read_timeout": "150ms"}, "max_retries", "-1", []string{"EVALSHA", "EVAL"}, 4, 1},
		// redsync's tries: each try's SET NX times out, and is given back.
		{"redsync@v4.18.1", map[string]string{"read_timeout": "150ms", "tries": "3"}, "tries", "1", []string{"SET"}, 3, 1},
		{"redsync@v1.3.0", map[string]string{"read_timeout": "150ms", "tries": "2", "retry_delay": "10ms"}, "tries", "1", []string{"SET"}, 2, 1},
		// redlock-go bounds each try by the TTL, within which go-redis
		// sends a timed-out SET NX four times.
		{"redlock-go@v3.0.0", map[string]string{"read_timeout": "150ms", "retry_count": "2"}, "retry_count", "1", []string{"SET"}, 8, 4},
		// redis-py 4.3.4 sends nothing twice, unless retry_on_timeout.
		{"redispy@4.3.4", map[string]string{"socket_timeout": "150ms", "blocking": "false"}, "retry_on_timeout", "true", []string{"SET"}, 1, 2},
	} {
		t.Run(c.lock, func(t *testing.T) {
			cmd, err := drivers.Build(context.Background(), c.lock, t.Logf)
			if strings.HasPrefix(c.lock, "redispy@") && err != nil {
				t.Skipf("redis-py is not set up here: %v", err)
			}
			require.NoError(t, err)
			sends := func(knobs map[string]string) int {
				key := fmt.Sprintf("k-%d", time.Now().UnixNano())
				s := newStall(t, key)
				p, err := client.Start(cmd, client.Options{Stderr: io.Discard})
				require.NoError(t, err)
				defer p.Kill()
				e := endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{"redis-1:6379"},
					Addresses: map[string]string{"redis-1:6379": s.ln.Addr().String()}}
				rep, err := p.Call(context.Background(), client.Request{Op: client.OpOpen, Lock: c.lock, TTLMS: 2000, Endpoints: &e,
					Options: &client.LockOptions{Library: knobs}}, 10*time.Second)
				require.NoError(t, err)
				require.Equal(t, client.OutcomeOK, rep.Outcome, rep.Error)
				rep, err = p.Call(context.Background(), client.Request{Op: client.OpAcquire, Key: key, Lease: "p0.1"}, 30*time.Second)
				require.NoError(t, err)
				require.NotEqual(t, client.OutcomeOK, rep.Outcome, "nothing answered: no grant")
				return s.count(c.commands...)
			}
			base := map[string]string{}
			for k, v := range c.base {
				base[k] = v
			}
			require.Equal(t, c.sent, sends(base), "at the base settings")
			base[c.knob] = c.to
			require.Equal(t, c.then, sends(base), "with %s=%s", c.knob, c.to)
		})
	}
}
