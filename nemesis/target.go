package nemesis

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// Selectors name targets, resolved when the fault strikes:
//
//	primary            the node Sentinel calls master; on a Redis Cluster, the
//	                   master of the primary key's slot (cluster.Spec.PrimaryKey)
//	replica            one replica of it, chosen by the seed
//	sentinel           one Sentinel, chosen by the seed
//	minority, majority of the lock-service masters, chosen by the seed
//	node:N1,N2         the named nodes
//	client:S           client slot S's current process (S = *: a slot chosen by the seed)
//	holder             the client that holds the step's key, the moment it does
//	holder:S           client slot S, the moment it holds the step's key
//	link:S:N1,N2       client slot S's links to the named nodes (S = *: chosen
//	                   by the seed; nodes = minority or majority: chosen by the seed;
//	                   primary or replica: the node of that role, found when the
//	                   fault strikes, so one scenario fits any deployment's names)
//
// SelectorHelp lists the target selectors.
var SelectorHelp = "primary, replica, sentinel, minority, majority, node:NAMES, client:SLOT, holder, holder:SLOT, link:SLOT:NAMES (SLOT may be *, NAMES of a link minority, majority, primary or replica)"

// CheckSelector rejects a selector that can never resolve, before any
// container starts: a scenario file's target, say.
func CheckSelector(sel string) error { return checkSelector(sel) }

func checkSelector(sel string) error {
	kind, arg, _ := strings.Cut(sel, ":")
	switch kind {
	case "primary", "replica", "sentinel", "minority", "majority":
		if arg == "" {
			return nil
		}
	case "holder":
		if n, err := strconv.Atoi(arg); arg == "" || (err == nil && n >= 0) {
			return nil
		}
	case "node":
		if arg != "" {
			return nil
		}
	case "client":
		if _, err := strconv.Atoi(arg); err == nil || arg == "*" {
			return nil
		}
	case "link":
		slot, nodes, ok := strings.Cut(arg, ":")
		if _, err := strconv.Atoi(slot); (err == nil || slot == "*") && ok && nodes != "" {
			return nil
		}
	}
	return fmt.Errorf("bad target %q (known: %s)", sel, SelectorHelp)
}

// RenameNodes is sel with each node it names (node:NAMES, link:S:NAMES)
// put through rename; a name rename does not know is an error. Other
// selectors (roles, minority, majority, clients) name no node and are
// returned as they are.
func RenameNodes(sel string, rename func(name string) (string, bool)) (string, error) {
	kind, arg, _ := strings.Cut(sel, ":")
	prefix := kind + ":"
	switch kind {
	case "node":
	case "link":
		slot, nodes, _ := strings.Cut(arg, ":")
		prefix, arg = prefix+slot+":", nodes
		if slices.Contains([]string{"minority", "majority", "primary", "replica"}, arg) {
			return sel, nil // a share or a role names no node
		}
	default:
		return sel, nil
	}
	names := strings.Split(arg, ",")
	for i, n := range names {
		to, ok := rename(n)
		if !ok {
			return "", fmt.Errorf("target %q names node %s", sel, n)
		}
		names[i] = to
	}
	return prefix + strings.Join(names, ","), nil
}

// lookup asks the cluster who holds a role, again for a while if it
// could not tell: under load a node can miss a reply (seen: CLUSTER NODES
// timing out on three of six nodes), and the role is still held.
func lookup[T any](ctx context.Context, ask func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(lookupFor)
	for {
		v, err := ask(ctx)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return v, err
		}
		sleep(ctx, 250*time.Millisecond)
	}
}

// lookupFor bounds lookup's tries.
const lookupFor = 10 * time.Second

// resolve finds the target of sel now. key and on are the step's, for
// holder.
func resolve(ctx context.Context, env Env, sel, key string, on history.F) (Target, error) {
	kind, arg, _ := strings.Cut(sel, ":")
	c := env.Cluster
	nodes := func(ns ...Node) (Target, error) {
		t := Target{Nodes: ns}
		t.Name = t.nodeNames()
		return t, nil
	}
	switch kind {
	case "primary":
		m, err := lookup(ctx, c.Master)
		if err != nil {
			return Target{}, err
		}
		return nodes(m)
	case "replica":
		rs, err := lookup(ctx, c.Replicas)
		if err != nil {
			return Target{}, err
		}
		if len(rs) == 0 {
			return Target{}, fmt.Errorf("the master has no replica")
		}
		return nodes(rs[env.Rng.IntN(len(rs))])
	case "sentinel":
		ss := c.ByRole(topology.RoleSentinel)
		if len(ss) == 0 {
			return Target{}, fmt.Errorf("this cluster has no Sentinel")
		}
		return nodes(ss[env.Rng.IntN(len(ss))])
	case "minority", "majority":
		pick, err := share(env, kind)
		if err != nil {
			return Target{}, err
		}
		return nodes(pick...)
	case "node":
		ns, err := named(c, arg)
		if err != nil {
			return Target{}, err
		}
		return nodes(ns...)
	case "client", "holder":
		slot := AnySlot // holder: any client's hold; holder:N client slot N's
		if kind == "client" {
			key, slot = "", slotOf(env, arg)
		} else if key == "" {
			return Target{}, fmt.Errorf("target holder needs the step's key")
		} else if arg != "" {
			slot = slotOf(env, arg)
		}
		return victim(ctx, env, slot, key, on)
	case "link":
		slotText, names, _ := strings.Cut(arg, ":")
		slot := slotOf(env, slotText)
		var ns []Node
		var err error
		switch names {
		case "minority", "majority":
			ns, err = share(env, names)
		case "primary", "replica":
			ns, err = linkByRole(ctx, env, names)
		default:
			ns, err = named(c, names)
		}
		if err != nil {
			return Target{}, err
		}
		t := Target{Nodes: ns, Slot: slot}
		t.Name = fmt.Sprintf("client %d -> %s", slot, t.nodeNames())
		return t, nil
	}
	return Target{}, checkSelector(sel)
}

// linkByRole is the node of role (primary or replica) for a link, found
// when the fault strikes: one scenario then fits any deployment's node
// names. A single lock-service master is the primary of a topology that
// has no failover.
func linkByRole(ctx context.Context, env Env, role string) ([]Node, error) {
	if ms := env.Cluster.ByRole(topology.RoleRedis); role == "primary" && len(ms) == 1 {
		return ms, nil
	}
	t, err := resolve(ctx, env, role, "", "")
	return t.Nodes, err
}

// share picks a minority or majority of the lock-service masters by seed.
func share(env Env, kind string) ([]Node, error) {
	ms := env.Cluster.ByRole(topology.RoleRedis)
	k := (len(ms) - 1) / 2
	if kind == "majority" {
		k = len(ms)/2 + 1
	}
	if k == 0 {
		return nil, fmt.Errorf("%d masters have no %s", len(ms), kind)
	}
	var pick []Node
	for _, i := range env.Rng.Perm(len(ms))[:k] {
		pick = append(pick, ms[i])
	}
	return pick, nil
}

// slotOf is the client slot a selector names; * lets the seed choose.
func slotOf(env Env, arg string) int {
	if arg == "*" {
		if env.Clients == nil || env.Clients.Slots() == 0 {
			return 0
		}
		return env.Rng.IntN(env.Clients.Slots())
	}
	n, _ := strconv.Atoi(arg)
	return n
}

func named(c Cluster, names string) ([]Node, error) {
	var out []Node
	for _, name := range strings.Split(names, ",") {
		n, err := c.Node(name)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// processName is how the history names a client process.
func processName(id int) string { return fmt.Sprintf("process %d", id) }
