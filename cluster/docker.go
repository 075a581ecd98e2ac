package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// Labels that mark what a run started, so that the run removes it and a later
// run can sweep what a killed run left behind.
const (
	LabelRun = "org.deadbolt.run"
	LabelPID = "org.deadbolt.pid"
)

func init() {
	// Ryuk needs an image pull, which is impossible here; deadbolt removes
	// what it starts itself. Exactly this string, as testcontainers reads it.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
}

type docker struct {
	cli *testcontainers.DockerClient
}

func newDocker(ctx context.Context) (*docker, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("no Docker engine reachable: %w", err)
	}
	return &docker{cli: cli}, nil
}

// Available reports whether a Docker engine answers; tests use it to skip.
func Available(ctx context.Context) error {
	d, err := newDocker(ctx)
	if err != nil {
		return err
	}
	defer d.cli.Close()
	if _, err := d.cli.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("no Docker engine reachable: %w", err)
	}
	return nil
}

func runLabels(run string) map[string]string {
	return map[string]string{LabelRun: run, LabelPID: strconv.Itoa(os.Getpid())}
}

// removeRun force-removes every container, then every network, of one run.
func (d *docker) removeRun(ctx context.Context, run string) error {
	f := make(client.Filters).Add("label", LabelRun+"="+run)
	return d.remove(ctx, f, func(map[string]string) bool { return true })
}

// Sweep removes the containers and networks of runs whose process is gone,
// such as a run killed with SIGKILL. Runs of live processes are left alone.
func Sweep(ctx context.Context) error {
	d, err := newDocker(ctx)
	if err != nil {
		return err
	}
	defer d.cli.Close()
	return d.sweep(ctx)
}

func (d *docker) sweep(ctx context.Context) error {
	return d.remove(ctx, make(client.Filters).Add("label", LabelRun), func(labels map[string]string) bool {
		pid, err := strconv.Atoi(labels[LabelPID])
		return err != nil || !processAlive(pid)
	})
}

func (d *docker) remove(ctx context.Context, f client.Filters, match func(map[string]string) bool) error {
	var errs []error
	cs, err := d.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	for _, c := range cs.Items {
		if !match(c.Labels) {
			continue
		}
		if _, err := d.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, fmt.Errorf("remove container %s: %w", c.ID[:12], err))
		}
	}
	ns, err := d.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list networks: %w", err))...)
	}
	for _, n := range ns.Items {
		if !match(n.Labels) {
			continue
		}
		if _, err := d.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Leftovers lists the containers and networks that carry a label, given as
// "key=value" (LabelRun+"="+run, or LabelPID+"="+pid for one process's runs).
func Leftovers(ctx context.Context, label string) ([]string, error) {
	d, err := newDocker(ctx)
	if err != nil {
		return nil, err
	}
	defer d.cli.Close()
	f := make(client.Filters).Add("label", label)
	var out []string
	cs, err := d.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	for _, c := range cs.Items {
		out = append(out, "container "+c.Names[0])
	}
	ns, err := d.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, n := range ns.Items {
		out = append(out, "network "+n.Name)
	}
	return out, nil
}
