// Package clienttest lets a test binary start client processes without a
// built deadbolt: the binary runs itself as the Go driver.
package clienttest

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/client"
	_ "github.com/deadbolt-lab/deadbolt/locks/all" // the driver offers every lock deadbolt has
)

const envDriver = "DEADBOLT_TEST_DRIVER"

// Main is a test package's TestMain: started by Command, the test binary
// serves the driver protocol instead of running tests.
func Main(m *testing.M) {
	if os.Getenv(envDriver) == "1" {
		redis.SetLogger(quiet{})
		os.Exit(client.Serve(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// Command starts this test binary as a driver; its package's TestMain must
// call Main.
func Command() client.Command {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return client.Command{Path: exe, Env: []string{envDriver + "=1"}}
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
