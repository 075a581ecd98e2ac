package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Command is how to start a driver: a program and its arguments, and
// variables added to the harness's environment.
type Command struct {
	Path string
	Args []string
	Env  []string
}

func (c Command) String() string { return strings.Join(append([]string{c.Path}, c.Args...), " ") }

// Options for Start.
type Options struct {
	// Stderr receives the driver's own log lines; nil discards them.
	Stderr io.Writer
	// OnEvent hears every event after the hello, in order, from the goroutine
	// that reads the driver's output: it must not block.
	OnEvent func(Event)
	// HelloTimeout bounds the wait for the driver's hello (default 10s).
	HelloTimeout time.Duration
	// OnSent hears each request once its line was written to the driver,
	// with the time the write began, from the goroutine that called Call: a
	// fault timed from the write starts its clock there. It must not block.
	OnSent func(req Request, at time.Time)
}

// Errors of Call. ErrNotSent means the request certainly never reached the
// driver; the others leave its outcome unknown.
var (
	ErrNotSent = errors.New("request not sent: the driver is gone")
	ErrNoReply = errors.New("no reply in time")
	ErrExited  = errors.New("the driver exited before it replied")
)

// Process is one running driver, seen from the harness. Call sends one
// request at a time; Pause, Resume and Kill act on the OS process.
type Process struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *os.File
	hello   Event
	onEvent func(Event)
	onSent  func(Request, time.Time)
	// answered is the id of the last reply read from the driver.
	answered atomic.Int64

	calls   sync.Mutex // one request in flight
	nextID  int64
	replies chan Reply

	exited chan struct{} // closed once the process has been waited for
	state  *os.ProcessState

	mu           sync.Mutex
	reaping      bool
	protocolErr  error
	stopped      bool
	stoppedSince time.Time
	stoppedTotal time.Duration
	arm          string
}

// Start starts a driver and waits for its hello.
func Start(c Command, o Options) (*Process, error) {
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stderr = o.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := start(cmd); err != nil {
		return nil, fmt.Errorf("start driver %s: %w", c, err)
	}
	p := &Process{
		cmd: cmd, stdin: stdin, onEvent: o.OnEvent, onSent: o.OnSent, nextID: 1,
		replies: make(chan Reply, 4), exited: make(chan struct{}),
	}
	p.stdout, _ = stdout.(*os.File)
	hello := make(chan Event, 1)
	go p.read(stdout, hello)
	timeout := o.HelloTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	select {
	case h, ok := <-hello:
		if !ok {
			p.Kill()
			return nil, fmt.Errorf("driver %s did not say hello: %v", c, p.failure())
		}
		if h.Protocol != ProtocolVersion {
			p.Kill()
			return nil, fmt.Errorf("driver %s speaks protocol %d, the harness %d", c, h.Protocol, ProtocolVersion)
		}
		p.hello = h
		return p, nil
	case <-time.After(timeout):
		p.Kill()
		return nil, fmt.Errorf("driver %s said no hello within %s", c, timeout)
	}
}

// read dispatches the driver's output lines until it closes stdout, then
// reaps the process.
func (p *Process) read(stdout io.Reader, hello chan<- Event) {
	defer func() {
		// From here on the pid may be reaped and reused: no more group signals.
		p.mu.Lock()
		p.reaping = true
		p.mu.Unlock()
		state, _ := p.cmd.Process.Wait()
		p.mu.Lock()
		p.state = state
		p.mu.Unlock()
		close(p.exited)
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	greeted := false
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var kind struct {
			Event *string `json:"event"`
		}
		if err := json.Unmarshal(line, &kind); err != nil {
			p.violation(fmt.Errorf("not a protocol line: %q", line))
			break
		}
		if kind.Event == nil {
			var r Reply
			if err := json.Unmarshal(line, &r); err != nil || !greeted {
				p.violation(fmt.Errorf("bad reply line %q: %v", line, err))
				break
			}
			p.answered.Store(max(p.answered.Load(), r.ID))
			p.replies <- r
			continue
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			p.violation(fmt.Errorf("bad event line %q: %v", line, err))
			break
		}
		switch {
		case !greeted:
			if ev.Event != EventHello {
				p.violation(fmt.Errorf("first line is %q, want a hello", line))
				close(hello)
				return
			}
			greeted = true
			hello <- ev
			continue
		case ev.Event == EventStopped:
			p.markStopped()
		case ev.Event == EventError:
			p.violation(fmt.Errorf("the driver reports: %s", ev.Error))
		}
		if p.onEvent != nil {
			p.onEvent(ev)
		}
	}
	if !greeted {
		close(hello)
	}
}

// violation records a protocol error and kills the driver, which can no
// longer be trusted to answer.
func (p *Process) violation(err error) {
	p.mu.Lock()
	if p.protocolErr == nil {
		p.protocolErr = err
	}
	p.mu.Unlock()
	p.signal(syscall.SIGKILL)
}

func (p *Process) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.protocolErr != nil {
		return p.protocolErr
	}
	if p.state != nil {
		return errors.New(p.state.String())
	}
	return errors.New("no output")
}

// PID is the driver's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Hello is what the driver announced.
func (p *Process) Hello() Event { return p.hello }

// Exited is closed once the driver has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Arm makes the next request carry Arm: the driver stops itself at point
// the next time it reaches it.
func (p *Process) Arm(point string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.arm = point
}

// Call sends one request and waits for its reply. The timeout does not
// count time the process spent stopped (Pause, or a self-stop at an armed
// point): a paused client is slow, not hung. A driver that does not answer
// in time is killed, since its outcome can no longer be told; ErrNotSent
// is the only error after which the request certainly had no effect.
func (p *Process) Call(ctx context.Context, req Request, timeout time.Duration) (Reply, error) {
	p.calls.Lock()
	defer p.calls.Unlock()
	req.ID = p.nextID
	p.nextID++
	p.mu.Lock()
	req.Arm, p.arm = p.arm, ""
	p.mu.Unlock()
	line, err := json.Marshal(req)
	if err != nil {
		return Reply{}, fmt.Errorf("%w: %v", ErrNotSent, err)
	}
	select {
	case <-p.exited:
		return Reply{}, fmt.Errorf("%w (%v)", ErrNotSent, p.failure())
	default:
	}
	// Timed as the write begins: the driver may read the line, answer and
	// leave the reply waiting before a writer preempted by it (on a loaded
	// machine, as the write wakes the driver) could read the clock after.
	sent := time.Now()
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		return Reply{}, fmt.Errorf("%w: %v", ErrNotSent, err)
	}
	if p.onSent != nil {
		p.onSent(req, sent)
	}
	stoppedBefore := p.stoppedFor(sent)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case r := <-p.replies:
			if r.ID < req.ID {
				continue // the answer to a call abandoned when its context ended
			}
			if r.ID != req.ID {
				p.violation(fmt.Errorf("reply to request %d while %d was pending", r.ID, req.ID))
				return Reply{}, fmt.Errorf("%w: %v", ErrExited, p.failure())
			}
			return r, nil
		case <-p.exited:
			// The reader is done: what it read is all buffered, the answer
			// perhaps behind one to a call abandoned earlier.
			for {
				select {
				case r := <-p.replies:
					if r.ID == req.ID {
						return r, nil
					}
				default:
					return Reply{}, fmt.Errorf("%w (%v)", ErrExited, p.failure())
				}
			}
		case <-ctx.Done():
			return Reply{}, ctx.Err()
		case now := <-timer.C:
			running := now.Sub(sent) - (p.stoppedFor(now) - stoppedBefore)
			if running < timeout {
				timer.Reset(timeout - running)
				continue
			}
			p.Kill()
			return Reply{}, fmt.Errorf("%w: %s without a reply to %s", ErrNoReply, timeout, req.Op)
		}
	}
}

// Answered reports whether the harness has read the driver's reply to
// request id. A process stopped (or dead) before that wrote it after the
// stop, or never, provided nothing it wrote earlier is still unread
// (Unread).
func (p *Process) Answered(id int64) bool { return p.answered.Load() >= id }

// Unread is how many bytes the driver wrote to its stdout that the harness
// has not read yet, or -1 when that cannot be told.
func (p *Process) Unread() int {
	if p.stdout == nil {
		return -1
	}
	rc, err := p.stdout.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	if err := rc.Control(func(fd uintptr) {
		// TIOCINQ is FIONREAD: the bytes a pipe holds.
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	}); err != nil {
		return -1
	}
	return n
}

// stoppedFor is how long the process has been stopped in all, up to now.
func (p *Process) stoppedFor(now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.stoppedTotal
	if p.stopped {
		d += now.Sub(p.stoppedSince)
	}
	return d
}

func (p *Process) markStopped() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.stopped, p.stoppedSince = true, time.Now()
	}
}

// Pause stops the whole process with SIGSTOP: every thread, the lock's
// timers and watchdog included, as a GC pause or a descheduled VM would.
// It returns once /proc shows every thread stopped: a thread group stops
// one thread at a time, and on a loaded machine a thread may run on for a
// millisecond after the signal, long enough to send a command.
func (p *Process) Pause() error {
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.markStopped()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for !p.allStopped() {
		if p.State() == "" {
			return ErrExited
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("client %d never stopped (it is %s): %w", p.PID(), p.State(), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// allStopped reports whether every thread of the process is stopped.
func (p *Process) allStopped() bool {
	dir := fmt.Sprintf("/proc/%d/task", p.PID())
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		if stateIn(dir+"/"+task.Name()+"/stat") != "T" {
			return false
		}
	}
	return true
}

// Resume continues a paused or self-stopped process.
func (p *Process) Resume() error {
	err := p.signal(syscall.SIGCONT)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		p.stopped = false
		p.stoppedTotal += time.Since(p.stoppedSince)
	}
	return err
}

// Kill ends the driver with SIGKILL, which also ends a stopped one, and
// waits until it is reaped. Its deferred work (releases) never runs.
func (p *Process) Kill() {
	if p.signal(syscall.SIGKILL) != nil {
		// Being reaped (or a driver that closed its stdout but lives on):
		// os.Process signals through a pidfd, safe against pid reuse.
		_ = p.cmd.Process.Kill()
	}
	<-p.exited
}

// Close ends a driver gracefully: its stdin closes and it exits; one that
// does not within grace, or is stopped, is killed.
func (p *Process) Close(grace time.Duration) {
	p.stdin.Close()
	if p.isStopped() {
		p.Kill()
		return
	}
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.Kill()
	}
}

func (p *Process) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// signal sends sig to the driver's process group (it leads one), so that
// anything it started goes too.
func (p *Process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaping {
		return ErrExited
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to client %d: %w", sig, p.cmd.Process.Pid, err)
	}
	return nil
}

// State is the process state letter from /proc: "T" when stopped, "S" or
// "R" when running, "" once gone.
func (p *Process) State() string { return stateIn(fmt.Sprintf("/proc/%d/stat", p.PID())) }

// stateIn is the state letter of a /proc stat file, "" when unreadable.
func stateIn(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// WaitState waits until the process is in state (such as "T"), polling
// /proc: a signal is delivered asynchronously.
func (p *Process) WaitState(ctx context.Context, state string) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		if s := p.State(); s == state {
			return nil
		} else if s == "" {
			return ErrExited
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("client %d never reached state %s (it is %s): %w", p.PID(), state, p.State(), ctx.Err())
		case <-t.C:
		}
	}
}
