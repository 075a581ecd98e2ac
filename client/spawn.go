package client

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Client processes must die with the harness on every exit path, SIGKILL
// of the harness included. Pdeathsig does that, but Linux sends it when the
// *thread* that forked the child exits, and Go may end threads; so every
// client is forked from one goroutine locked to a thread that never exits.
// Each client also leads its own process group, so that a terminal's
// Ctrl-C reaches only the harness, which then ends its clients itself.

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawns    chan spawnRequest
)

func spawnThread() {
	runtime.LockOSThread() // never unlocked: this thread lives as long as the harness
	for r := range spawns {
		r.done <- r.cmd.Start()
	}
}

// start starts cmd from the spawner thread, as its own process group, to
// be killed when the harness dies.
func start(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawns = make(chan spawnRequest)
		go spawnThread()
	})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	r := spawnRequest{cmd: cmd, done: make(chan error, 1)}
	spawns <- r
	return <-r.done
}
