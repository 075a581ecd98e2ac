package dbtest

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/deadbolt-lab/deadbolt/client"
)

// envDriver, set to 1, makes a test binary that calls Main serve the client
// protocol instead of running its tests.
const envDriver = "DEADBOLT_DBTEST_DRIVER"

// mainRan reports that this binary's TestMain calls Main, so that its
// client processes (the same binary, re-executed) serve the protocol.
var mainRan bool

// Main is the test package's TestMain:
//
//	func TestMain(m *testing.M) {
//		dbtest.Register("mylock", "what it is", mylock.New) // or in an init function
//		dbtest.Main(m)
//	}
//
// Run starts every client as this test binary again with DEADBOLT_DBTEST_DRIVER=1;
// there Main serves deadbolt's client protocol (client.Serve) with every lock
// registered by then, built-in and yours, and exits without running a test.
// Register your lock before Main, and do nothing before it that a client
// process must not do.
func Main(m *testing.M) {
	mainRan = true
	if os.Getenv(envDriver) == "1" {
		os.Exit(serve())
	}
	os.Exit(m.Run())
}

// serve is the client process. Its stdout carries protocol lines only: the
// protocol gets its own copy of the descriptor, and stdout itself becomes
// stderr (the client's log), so whatever the lock prints lands in the log.
func serve() int {
	out, err := unix.Dup(1)
	if err == nil {
		err = unix.Dup3(2, 1, 0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "dbtest: keep stdout for the protocol: %v\n", err)
		return 2
	}
	return client.Serve(os.Stdin, os.NewFile(uintptr(out), "protocol"), os.Stderr)
}

// driver is this test binary run as a client process.
func driver() (client.Command, error) {
	exe, err := os.Executable()
	if err != nil {
		return client.Command{}, fmt.Errorf("find the test binary to run its clients: %w", err)
	}
	return client.Command{Path: exe, Env: []string{envDriver + "=1"}}, nil
}
