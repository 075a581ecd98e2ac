package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/redis/go-redis/v9"
)

// deadbolt's own Go client runs as a small binary of its own,
// deadbolt-client (cmd/deadbolt-client): the driver protocol over
// deadbolt's locks and nothing else, a fraction of the whole deadbolt's
// size, start-up time and memory, paid once per client process. It is
// built beside deadbolt (make build) and found there; a missing one is an
// error that says how to build it, never a quiet fall-back to another
// client.

// OwnName is the file name of deadbolt's own client binary.
const OwnName = "deadbolt-client"

// OwnEnv names the environment variable that points at the client binary
// when it is not beside deadbolt (deadbolt run with go run, say).
const OwnEnv = "DEADBOLT_CLIENT"

// own, when set (SetOwn), is the command Own returns.
var own *Command

// SetOwn makes cmd the client Own returns: a binary that embeds deadbolt
// with locks of its own runs itself as its clients (cli.ClientsAreThisBinary).
func SetOwn(cmd Command) { own = &cmd }

// Own is the command that runs deadbolt's own client: the one SetOwn set,
// the file OwnEnv names, else deadbolt-client beside the running executable
// (or beside the file it links to).
func Own() (Command, error) {
	if own != nil {
		return *own, nil
	}
	if path := os.Getenv(OwnEnv); path != "" {
		if err := executable(path); err != nil {
			return Command{}, fmt.Errorf("%s=%s: %w", OwnEnv, path, err)
		}
		return Command{Path: path}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return Command{}, fmt.Errorf("find deadbolt's own client: %w", err)
	}
	dirs := []string{filepath.Dir(exe)}
	if real, err := filepath.EvalSymlinks(exe); err == nil && !slices.Contains(dirs, filepath.Dir(real)) {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		path := filepath.Join(d, OwnName)
		if executable(path) == nil {
			return Command{Path: path}, nil
		}
	}
	return Command{}, fmt.Errorf("deadbolt's own client %s is not beside %s: build it there with `make build` (or `go build -o %s ./cmd/deadbolt-client`), or name it in %s",
		OwnName, exe, filepath.Join(dirs[0], OwnName), OwnEnv)
}

func executable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no such file")
	case err != nil:
		return err
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("not an executable file")
	}
	return nil
}

// IsOwn reports a driver command line that runs deadbolt's own client,
// of any path: deadbolt-client, or `deadbolt client` as runs stored
// before the lean client name it (their scenario.json replays with the
// client this deadbolt has).
func IsOwn(cmd []string) bool {
	switch len(cmd) {
	case 1:
		return filepath.Base(cmd[0]) == OwnName
	case 2:
		return cmd[1] == "client"
	}
	return false
}

// ServeProcess is the main of a client process (deadbolt-client, and
// `deadbolt client`): Serve over the locks its binary imports, set up as
// a client process should be. It returns the exit code.
func ServeProcess(in io.Reader, out, logw io.Writer) int {
	// go-redis logs every reconnect; faults make that noise, the history
	// has the facts.
	redis.SetLogger(quietLogger{})
	// One thread runs the client's goroutines, unless GOMAXPROCS says
	// otherwise: a suite runs dozens of clients on two cores, and a lock
	// waits on Redis, not on the CPU; a second P only adds idle threads
	// that spin and wake up, each wake-up a system call that a
	// paravirtualized machine pays dearly for (pause-node-simple's
	// harness and clients used 7.6 s and 6.7 s of CPU with one, 12.9 s
	// without).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	return Serve(in, out, logw)
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
