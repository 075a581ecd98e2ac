package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// Labels that mark what a run started, so that the run removes it and a later
// run can sweep what a killed run left behind.
const (
	LabelRun = "org.deadbolt.run"
	LabelPID = "org.deadbolt.pid"
	// LabelProcStart is the owning process's start time, so that a reused
	// pid does not keep a dead run's leftovers alive.
	LabelProcStart = "org.deadbolt.proc-start"
	// LabelHost says where the pid means something: the kernel's boot and
	// the harness's pid namespace. A Docker engine may be shared by other
	// machines or containers, whose runs' pids mean nothing here.
	LabelHost = "org.deadbolt.host"
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
	pid := os.Getpid()
	return map[string]string{LabelRun: run, LabelPID: strconv.Itoa(pid), LabelProcStart: procStart(pid), LabelHost: hostIdentity()}
}

// hostIdentity names this kernel boot and this pid namespace, "" where
// /proc cannot tell.
func hostIdentity() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + ns
}

// sweepable reports whether a labelled run is a dead one of this host's.
// Runs of another host are never touched: their pids mean nothing here.
// Runs labelled before hosts were recorded count as this host's.
func sweepable(labels map[string]string) bool {
	if h, ok := labels[LabelHost]; ok && h != hostIdentity() {
		return false
	}
	pid, err := strconv.Atoi(labels[LabelPID])
	return err != nil || !processAlive(pid, labels[LabelProcStart])
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
	return d.remove(ctx, make(client.Filters).Add("label", LabelRun), sweepable)
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
		if err := d.removeContainer(ctx, c.ID); err != nil {
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
		if _, err := d.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// removeContainer force-removes one container. Two runs may sweep the same
// dead run at once: a container already gone is removed, and one whose
// removal is already in progress is waited for, so that its network can go.
func (d *docker) removeContainer(ctx context.Context, id string) error {
	_, err := d.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err == nil || cerrdefs.IsNotFound(err) {
		return nil
	}
	if !cerrdefs.IsConflict(err) {
		return err
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		_, ierr := d.cli.ContainerInspect(wait, id, client.ContainerInspectOptions{})
		if cerrdefs.IsNotFound(ierr) {
			return nil
		}
		select {
		case <-wait.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// processAlive reports whether the process that labelled a run still runs:
// same pid, same start time, and not a zombie waiting to be reaped.
func processAlive(pid int, start string) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err) // no procfs: trust kill(0)
	}
	state, started := procStat(string(stat))
	return state != "Z" && state != "X" && (start == "" || started == start)
}

// procStart is the start time of a process from /proc, "" where unknown.
func procStart(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	_, started := procStat(string(stat))
	return started
}

// procStat reads the state and start time fields of /proc/<pid>/stat; the
// command name before them may itself contain spaces and parentheses.
func procStat(stat string) (state, start string) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return "", ""
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 20 {
		return "", ""
	}
	return f[0], f[19]
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
