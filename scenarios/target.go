package scenarios

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// A run against an existing deployment (RunOptions.Target, `--target
// FILE`) starts no container: the clients, the checkers and the faults on
// clients and links are the same, and node faults are refused, since
// deadbolt cannot kill, freeze, isolate or move the clock of a node it
// did not start.

// fitTarget checks, before anything starts, that the scenario can run
// against target, and takes the target's topology as its own.
func (s Scenario) fitTarget(target endpoints.Endpoints, need nemesis.Needs, kind workloads.Kind) (Scenario, error) {
	if err := target.Check(); err != nil {
		return s, fmt.Errorf("--target: %w", err)
	}
	nodes, err := nemesis.NodeFaults(s.Nemesis, s.Fault)
	if err != nil {
		return s, err
	}
	if len(nodes) > 0 {
		return s, fmt.Errorf("scenario %s injects node faults (%s), and --target runs only client and link faults: "+
			"deadbolt cannot kill, freeze, isolate or move the clock of nodes it did not start "+
			"(docs/architecture.md says how node faults would be driven on Kubernetes)", s.Name, strings.Join(nodes, ", "))
	}
	if !need.Allows(target.Topology) {
		return s, fmt.Errorf("nemesis %s needs %s; the target is %s", s.Nemesis, need.TopologyWords(), target.Topology)
	}
	if kind.Resource && target.Resource == "" {
		return s, fmt.Errorf("scenario %s runs workload %s, whose data lives on a resource node, and the target names none (\"resource\")", s.Name, kind.Name)
	}
	if s.Cluster.Replication != (cluster.Replication{}) {
		return s, fmt.Errorf("scenario %s sets its nodes' replication (%+v), and a --target deployment keeps its own settings", s.Name, s.Cluster.Replication)
	}
	if s.Cluster.TLS && target.TLSCA == "" {
		return s, fmt.Errorf("scenario %s runs with TLS, and the target names no CA (\"tls_ca\"): a --target deployment has the TLS it has, said by its tls_ca", s.Name)
	}
	if err := s.retarget(target); err != nil {
		return s, err
	}
	// A target with TLS says so with its CA, and its locks must speak it.
	s.Cluster = cluster.Spec{Topology: target.Topology, LinkFaults: s.Cluster.LinkFaults, Resource: kind.Resource, TLS: target.TLSCA != ""}
	return s, nil
}

// attachTarget is the cluster of a run against target: nothing is started,
// and the lock keys must not exist there yet, so that the run judges only
// what its own clients did (and never takes over someone's lock).
func attachTarget(ctx context.Context, target endpoints.Endpoints, linkFaults bool, keys []string) (*cluster.Cluster, error) {
	cl, err := cluster.Attach(target, linkFaults)
	if err != nil {
		return nil, err
	}
	if err := keysFree(ctx, target, keys); err != nil {
		return nil, errors.Join(err, cl.Close(ctx))
	}
	return cl, nil
}

// ErrKeysTaken is a target that already holds a lock key the run would
// use: bad input, found before any client starts.
var ErrKeysTaken = errors.New("--target: the lock keys are taken")

// SuiteKeysFree checks, before the first of suite runs against target,
// that none of its lock keys exists there: the suite is refused as bad
// input (ErrKeysTaken) rather than each of its runs failing in turn.
func SuiteKeysFree(ctx context.Context, target endpoints.Endpoints, suite []Scenario) error {
	var keys []string
	for _, s := range suite {
		for _, k := range s.Keys {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keysFree(ctx, target, keys)
}

// keysFree checks that none of keys exists on the target's master groups.
func keysFree(ctx context.Context, target endpoints.Endpoints, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	clients, err := target.Clients(endpoints.DefaultClientOptions())
	if err != nil {
		return err
	}
	for i, c := range clients {
		defer c.Close()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		n, err := c.Exists(cctx, keys...).Result()
		cancel()
		if err != nil {
			return fmt.Errorf("--target: master group %d does not answer: %w", i+1, err)
		}
		if n > 0 {
			return fmt.Errorf("%w: %d of the scenario's lock keys %v already exist on master group %d; "+
				"deadbolt judges only locks its own clients took: delete them, or wait for their TTL", ErrKeysTaken, n, keys, i+1)
		}
	}
	return nil
}

// redacted is target without its passwords, for scenario.json.
func redacted(target *endpoints.Endpoints) *endpoints.Endpoints {
	if target == nil {
		return nil
	}
	t := *target
	for _, p := range []*string{&t.Password, &t.SentinelPassword} {
		if *p != "" {
			*p = "(redacted)"
		}
	}
	return &t
}

// retarget puts the target's own node names in the plan steps that name
// nodes (node:NAMES, link:S:NAMES). A scenario names deadbolt's nodes:
// on independent masters redis-N is the N-th master the locks use, which
// is the target's N-th master too; a name the target's nodes do not have
// on another topology would leave the run unknown when the step strikes,
// so it is refused before anything starts.
func (s *Scenario) retarget(target endpoints.Endpoints) error {
	names := cluster.AttachedNames(target)
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	rename := func(n string) (string, bool) {
		if have[n] {
			return n, true
		}
		if i, err := strconv.Atoi(strings.TrimPrefix(n, "redis-")); err == nil && strings.HasPrefix(n, "redis-") &&
			target.Topology == cluster.Independent && i >= 1 && i <= len(target.Masters) {
			return names[target.Masters[i-1]], true
		}
		return "", false
	}
	steps := slices.Clone(s.Fault.Steps)
	for i, st := range steps {
		sel, err := nemesis.RenameNodes(st.Target, rename)
		if err != nil {
			return fmt.Errorf("scenario %s's step %d: %w, which the target's nodes (%s) do not have: "+
				"write a scenario file whose steps name a role (primary, replica; link:SLOT:primary for a link), a share (minority, link:SLOT:minority) or the target's nodes, and run it with --file",
				s.Name, i+1, err, strings.Join(slices.Sorted(maps.Keys(have)), ", "))
		}
		steps[i].Target = sel
	}
	s.Fault.Steps = steps
	return nil
}
