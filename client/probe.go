package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/shlex"

	"github.com/deadbolt-lab/deadbolt/locks"
)

// ParseCommand splits a driver's command line as a shell would split its
// words (quotes and backslashes), with no shell involved.
func ParseCommand(line string) (Command, error) {
	words, err := shlex.Split(line)
	if err != nil {
		return Command{}, fmt.Errorf("driver command %q: %w", line, err)
	}
	if len(words) == 0 {
		return Command{}, fmt.Errorf("driver command is empty")
	}
	return Command{Path: words[0], Args: words[1:]}, nil
}

// Probe starts the driver, reads its hello and ends it, to learn its locks
// before any container starts. A driver that cannot start or says no valid
// hello is an error that ends with the last lines of its stderr, where a
// driver says why (a library it cannot import).
func Probe(c Command) (locks.Declared, error) { return ProbeLock(c, nil) }

// Configured is the lock a run opens, for ProbeLock to ask its driver
// what it does as configured.
type Configured struct {
	Lock    string
	TTLMS   int64
	Options LockOptions
}

// ProbeLock is Probe, and, when the lock to run declares knobs (its
// lock_info's options), its declaration as it runs with the options it
// will be opened with (the declare request) in place of its hello's. A
// knob given to a lock that declares none, or one the driver refuses (an
// unknown one, a bad value), is the error.
func ProbeLock(c Command, lock *Configured) (locks.Declared, error) {
	// The driver writes its stderr into a pipe of our own, read to its end:
	// exec's copy into a Writer is awaited only by Cmd.Wait, and a driver
	// that exits at once (an import that failed) would otherwise be judged
	// before its last words arrived.
	r, w, err := os.Pipe()
	if err != nil {
		return locks.Declared{}, err
	}
	log := &lockedBuilder{}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer r.Close()
		_, _ = io.Copy(log, r)
	}()
	ls, err := probe(c, w, lock)
	w.Close() // the driver holds its own copy until it exits
	if err != nil {
		select {
		case <-read:
		case <-time.After(2 * time.Second): // a child it left behind keeps the pipe open
		}
		if l := strings.TrimSpace(log.String()); l != "" {
			err = fmt.Errorf("%w; its stderr: %s", err, lastLines(l, 5))
		}
	}
	return ls, err
}

func probe(c Command, stderr *os.File, lock *Configured) (locks.Declared, error) {
	p, err := Start(c, Options{Stderr: stderr})
	if err != nil {
		return locks.Declared{}, err
	}
	defer p.Close(2 * time.Second)
	h := p.Hello()
	if len(h.Locks) == 0 {
		return locks.Declared{}, fmt.Errorf("driver %s offers no lock (its hello lists none)", c)
	}
	for name := range h.LockInfo {
		found := false
		for _, l := range h.Locks {
			found = found || l == name
		}
		if !found {
			return locks.Declared{}, fmt.Errorf("driver %s declares lock_info for %q, which its hello's locks do not list", c, name)
		}
		for _, m := range h.LockInfo[name].Sentinel {
			if m != SentinelSwitch && m != SentinelReconnect {
				return locks.Declared{}, fmt.Errorf("driver %s declares sentinel mode %q for lock %q (known: %s, %s)", c, m, name, SentinelSwitch, SentinelReconnect)
			}
		}
	}
	d := locks.Declared{Driver: c.String(), Locks: h.Locks, Info: h.LockInfo}
	if lock == nil || d.Lookup(lock.Lock) != nil {
		return d, nil // a lock the driver lacks is its catalogue's to refuse
	}
	if len(d.Info[lock.Lock].Options) == 0 {
		if len(lock.Options.Library) > 0 {
			return d, fmt.Errorf("lock %s of driver %s takes no lock options (its lock_info declares none), and the run gives %s",
				lock.Lock, c, strings.Join(slices.Sorted(maps.Keys(lock.Options.Library)), ", "))
		}
		return d, nil
	}
	knobs := d.Info[lock.Lock].Options
	opts := lock.Options
	settings, err := ResolveLibrary(knobs, opts)
	if err != nil {
		return d, fmt.Errorf("lock %s: %w", lock.Lock, err)
	}
	opts.Library = settings
	rep, err := p.Call(context.Background(), Request{ID: 1, Op: OpDeclare, Lock: lock.Lock, TTLMS: lock.TTLMS, Options: &opts}, 10*time.Second)
	switch {
	case err != nil:
		return d, fmt.Errorf("driver %s declares lock options for %s, and its declare request failed: %w", c, lock.Lock, err)
	case rep.Outcome != OutcomeOK:
		return d, errors.New(rep.Error)
	case rep.LockInfo == nil:
		return d, fmt.Errorf("driver %s answered the declare request for %s without a lock_info", c, lock.Lock)
	}
	info := maps.Clone(d.Info)
	decl := *rep.LockInfo
	// The knobs are the hello's, and what differs from their defaults is
	// the harness's to say, from the settings it sent.
	decl.Options, decl.Settings = knobs, locks.Settings(settings).Changed(knobs)
	info[lock.Lock] = decl
	d.Info = info
	return d, nil
}

// ResolveLibrary is every knob's value for a lock that declares knobs,
// from the options a run gives it (options.library, and the options of
// open a knob takes its value from): what the harness sends in
// options.library, so that a driver in any language gets whole settings in
// their canonical form. An unknown knob or a bad value is the error, with
// the knobs the lock takes.
func ResolveLibrary(knobs locks.Knobs, lo LockOptions) (map[string]string, error) {
	return knobs.Resolve(lo.Library, lo.Generic())
}

// Generic is lo's own options (not the library's knobs) as the lock's
// options, before any default: what a knob's from reads.
func (lo LockOptions) Generic() locks.Options {
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	return locks.Options{Timeout: ms(lo.TimeoutMS), Retries: lo.Retries, RetryDelay: ms(lo.RetryDelayMS), Wait: ms(lo.WaitMS)}
}

// lastLines is the last n lines of s, joined by " | ".
func lastLines(s string, n int) string {
	ls := strings.Split(s, "\n")
	return strings.Join(ls[max(len(ls)-n, 0):], " | ")
}

// lockedBuilder collects a driver's stderr, written by the goroutine that
// copies it while Probe reads it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
