// Package cli is the deadbolt command as a library: Main runs it with the
// arguments after the program's name, so that a team's own binary that
// registers its own locks, faults, workloads and checkers (each one file
// and one registration) is the whole of deadbolt with them (see
// examples/extend). cmd/deadbolt is Main and nothing else.
//
// deadbolt runs lock scenarios against real Redis containers and checks
// their histories.
//
//	deadbolt list
//	deadbolt locks [--options LOCK]
//	deadbolt workloads
//	deadbolt faults
//	deadbolt run NAME [--seed N] [--time D] [--clients N] [--lock NAME] [--workload NAME] [--store DIR]
//	deadbolt run --file FILE [flags]
//	deadbolt scenario [NAME...] [--seed N] [--store DIR] [--junit FILE] [--shard I/N] [--fresh]
//	deadbolt matrix [--locks L,...] [--failures F,...] [--seeds N] [--seed N] [--parallel N] [--store DIR] [--junit FILE] [--shard I/N]
//	deadbolt explore --lock L [--against L2] [--runs N] [--seed S] [--parallel P] [--store DIR]
//	deadbolt bisect FILE --lock LIB --versions V1,V2,...|LO..HI [--seeds N] [--seed N] [--parallel N] [--store DIR]
//	deadbolt sweep NAME --knob K --values V1,V2,... [--seeds N] [--seed N] [--parallel N] [--store DIR]
//	deadbolt shrink RUN_DIR [--budget N] [--store DIR]
//	deadbolt check RUN_DIR
//	deadbolt report RUN_DIR
//	deadbolt report --merge --out DIR STORE...
//	deadbolt client                 (one lock user; the harness runs deadbolt-client)
//	deadbolt bench [--strict] [FILE...]
//	deadbolt image [--server NAME]
//	deadbolt help [COMMAND]
//	deadbolt version
//
// run and scenario exit 0 when every verdict matches its expectation, 1 when
// one contradicts it, 2 when one is unknown or no verdict could be reached;
// check exits 0 valid, 1 invalid, 2 unknown; bad input exits 254; an
// interrupted run exits 130 after removing its containers.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
	"github.com/deadbolt-lab/deadbolt/scenarios"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// Exit codes.
const (
	exitOK          = 0
	exitContradicts = 1
	exitUnknown     = 2
	exitInterrupted = 130
	exitBadInput    = 254
)

// usageError is bad input: a clear message and exit 254.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func badInput(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitError carries an exit code decided by a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

const usage = `usage:
  deadbolt list                      scenarios, one a line, with their expectation
  deadbolt locks                     locks selectable with --lock, one a line
  deadbolt locks --options LOCK      a lock's knobs (its library's settings, with their defaults) and what it does at them
  deadbolt workloads                 workloads selectable with --workload, one a line
  deadbolt faults                    the fault catalogue: every fault with its default target
  deadbolt run NAME [flags]          run one scenario
  deadbolt run --file FILE [flags]   run a scenario file (a stored run's scenario.json replays it, seed included)
  deadbolt scenario [NAME...] [flags] run a suite (default: the CI suite) and compare
  deadbolt matrix [--locks L1,L2] [--failures F1,F2] [--seeds N] [--shard I/N] [flags]  every lock under every failure: matrix.md, matrix.html, matrix.json
  deadbolt audit [--libraries L@V,...] [--failures F1,F2] [--seeds N] [--shard I/N] [flags]  every library version under every failure and finding: audit.md, audit.html, audit.json
  deadbolt explore --lock L [--against L2] [--runs N] [--seed S] [--parallel P]  generated scenarios aimed at the lock's calls, what breaks it shrunk: explore.md, explore.html, explore.json
  deadbolt image [--server NAME]     build a server's image FROM scratch out of Debian's packages (the recipe deadbolt carries)
  deadbolt bisect FILE --lock LIB --versions V1,V2|LO..HI [--seeds N]  one scenario file on each version of a library: the first affected and the first fixed
  deadbolt sweep NAME --knob K --values V1,V2 [--seeds N]  the unsafe window: how often the lock breaks at each value
  deadbolt shrink RUN_DIR [--budget N] a smaller scenario that still breaks the lock a run broke: RUN_DIR/shrunk.json
  deadbolt conformance --driver CMD [--lock NAME]  check a driver against docs/driver-protocol.md
  deadbolt check RUN_DIR [--model-steps N]  re-check a stored history
  deadbolt report RUN_DIR            re-render a stored run's report.md, report.html and the store's index.html
  deadbolt report --merge --out DIR STORE...  join shards' stores: one index.html, one junit.xml, one matrix
  deadbolt client                    one lock user process (docs/driver-protocol.md); the harness runs the lean deadbolt-client
  deadbolt bench [--strict] [FILE...] table of lock benchmarks from go test -bench output (stdin)
  deadbolt help [COMMAND]            this help, or a command's own: what it takes and its flags
  deadbolt version                   deadbolt's version, the commit it was built from and the Go that built it
`

// Main runs deadbolt with args (those after the program's name) on the
// process's standard streams and returns the exit code. It installs the
// handling of SIGINT and SIGTERM (the run cleans up, then exits 130), but
// for the client command, which dies of signals as a client must.
func Main(args []string) int {
	// go-redis logs every reconnect; faults make that noise, the history
	// has the facts.
	redis.SetLogger(quietLogger{})
	if len(args) > 0 && args[0] == "client" {
		return run(context.Background(), args, os.Stdout, os.Stderr)
	}
	tclog.SetDefault(tclog.NewNoopLogger())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once; the next run sweeps leftovers
	}()
	return run(ctx, args, os.Stdout, os.Stderr)
}

// ClientsAreThisBinary makes every client process this program's own
// client command, in place of deadbolt-client: a binary that embeds the
// CLI with locks of its own (registered in it) serves them to its clients.
func ClientsAreThisBinary() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	client.SetOwn(client.Command{Path: exe, Args: []string{"client"}})
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	var ue usageError
	var ee exitError
	var help helpShown
	switch {
	case errors.As(err, &help):
		fmt.Fprint(stdout, help.text)
		return exitOK
	case ctx.Err() != nil:
		// Interrupted, at whatever point: never a verdict's exit code,
		// even when the run finished writing its reports.
		if err == nil || errors.As(err, &ee) {
			err = errors.New("interrupted")
		}
		fmt.Fprintf(stderr, "deadbolt: %v\n", err)
		return exitInterrupted
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "deadbolt: %s\n", ue.msg)
		return exitBadInput
	case errors.Is(err, workloads.ErrDriverRefused), errors.Is(err, scenarios.ErrKeysTaken):
		// Tried before the run: the driver does not fit, or the target
		// already holds a lock key, which is bad input.
		fmt.Fprintf(stderr, "deadbolt: %v\n", err)
		return exitBadInput
	default:
		fmt.Fprintf(stderr, "deadbolt: %v\n", err)
		return exitUnknown
	}
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return badInput("no command given")
	}
	switch args[0] {
	case "help", "-h", "--help":
		return cmdHelp(ctx, args[1:], stdout, stderr)
	case "--version", "-version":
		return cmdVersion(args[1:], stdout)
	}
	if c, ok := lookupCommand(args[0]); ok {
		return c.run(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, usage)
	return badInput("unknown command %q%s", args[0], suggest.Hint(args[0], commandNames()))
}

// command is one of deadbolt's commands: args are those after its name.
type command struct {
	name string
	run  func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are deadbolt's commands but help, in the usage's order.
var commands = []command{
	{"list", func(_ context.Context, args []string, stdout, _ io.Writer) error { return cmdList(args, stdout) }},
	{"locks", func(ctx context.Context, args []string, stdout, _ io.Writer) error {
		return cmdLocks(ctx, args, stdout)
	}},
	{"workloads", func(_ context.Context, args []string, stdout, _ io.Writer) error { return cmdWorkloads(args, stdout) }},
	{"faults", func(_ context.Context, args []string, stdout, _ io.Writer) error { return cmdFaults(args, stdout) }},
	{"run", cmdRun},
	{"scenario", cmdScenario},
	{"matrix", cmdMatrix},
	{"audit", cmdAudit},
	{"explore", cmdExplore},
	{"bisect", cmdBisect},
	{"sweep", cmdSweep},
	{"shrink", cmdShrink},
	{"conformance", func(ctx context.Context, args []string, stdout, _ io.Writer) error {
		return cmdConformance(ctx, args, stdout)
	}},
	{"check", func(ctx context.Context, args []string, stdout, _ io.Writer) error {
		return cmdCheck(ctx, args, stdout)
	}},
	{"report", func(_ context.Context, args []string, stdout, _ io.Writer) error { return cmdReport(args, stdout) }},
	{"client", func(_ context.Context, args []string, stdout, stderr io.Writer) error {
		return cmdClient(args, stdout, stderr)
	}},
	{"bench", func(_ context.Context, args []string, stdout, _ io.Writer) error { return cmdBench(args, stdout) }},
	{"image", cmdImage},
	{"version", func(_ context.Context, args []string, stdout, _ io.Writer) error { return cmdVersion(args, stdout) }},
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames are every command's name, help's too.
func commandNames() []string {
	names := []string{"help"}
	for _, c := range commands {
		names = append(names, c.name)
	}
	return names
}

// cmdHelp is help [COMMAND]: the usage, or the command's own help (what
// its --help prints), on stdout.
func cmdHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0 || len(args) == 1 && args[0] == "help":
		fmt.Fprint(stdout, usage)
		return nil
	case len(args) > 1:
		return badInput("help takes one command name, got %q (deadbolt help lists the commands)", args)
	}
	c, ok := lookupCommand(args[0])
	if !ok {
		return badInput("help: unknown command %q (deadbolt help lists the commands)%s", args[0], suggest.Hint(args[0], commandNames()))
	}
	return c.run(ctx, []string{"--help"}, stdout, stderr)
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
