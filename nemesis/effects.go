package nemesis

import "github.com/deadbolt-lab/deadbolt/history"

// Effects say what a fault does to the lock service, declared with the
// fault (FaultDecl.Effects) so that whoever needs to know reads the
// declaration, never the fault's name: the explorer (package explore)
// aims each fault where its effects matter, and a fault registered from
// outside the package is drawn as the built-in ones are. A zero Effects
// claims nothing: the fault may do anything to the nodes it strikes.
type Effects struct {
	// OnClients: it acts on client processes or their links only; no
	// node's keys, clock or role change.
	OnClients bool `json:"on_clients,omitempty"`
	// KeepsKeys: every node it strikes keeps every key it holds, expiring
	// by its own clock as before (a freeze, closed connections).
	KeepsKeys bool `json:"keeps_keys,omitempty"`
	// MovesClock: it moves the struck nodes' wall clocks, so keys with a
	// TTL expire early or late there.
	MovesClock bool `json:"moves_clock,omitempty"`
	// Failover: it makes another node master by itself (it asks for a
	// failover).
	Failover bool `json:"failover,omitempty"`
	// Silences: the struck nodes stop answering their peers while it
	// lasts; held long enough on a master, its replicas' Sentinels (or
	// the cluster) promote another.
	Silences bool `json:"silences,omitempty"`
	// Kills: it kills what it strikes (a process, a node's server): what
	// ran there never answers again, and a fresh one takes its place.
	Kills bool `json:"kills,omitempty"`
	// Instant: it has no length: it strikes and is over, leaving what it
	// did behind (a killed client, closed connections); a step's for and
	// a grant aimed under it mean nothing for it.
	Instant bool `json:"instant,omitempty"`
	// BetweenNodes: it acts only on the traffic between nodes
	// (replication, Sentinel, the cluster bus), so masters without peers
	// (the independent topology) feel nothing.
	BetweenNodes bool `json:"between_nodes,omitempty"`
}

// Inside reports the client operation a fault strikes inside (acquire,
// release, renew: an extend or re-acquire), and whether it kills the
// client there rather than stopping it; ok is false for a fault that
// strikes no operation of its own choosing.
func Inside(fault string) (op history.F, kills, ok bool) {
	f, ok := faults[fault].fault.(inOp)
	return f.op, f.crash, ok
}
