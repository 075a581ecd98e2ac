package history

import "strings"

// Effects say what a fault does to the lock service, declared with the
// fault (nemesis.FaultDecl.Effects) and recorded on each of its
// fault-starts, so that whoever needs to know reads what a fault did,
// never its name: the checkers from the history's fault windows, the
// explorer (package explore) from the catalogue, to aim each fault where
// its effects matter. A fault registered from outside deadbolt is judged
// and drawn as the built-in ones are. A zero Effects claims nothing: the
// fault may do anything to the nodes it strikes.
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
	// Promotes: it makes a node master by itself (it asks for a
	// failover): the node it struck (PromotesStruck, a cluster failover
	// asked of a replica) or whichever its Sentinels choose
	// (PromotesAny, asked of a Sentinel); "" for none.
	Promotes string `json:"promotes,omitempty"`
	// Silences: the struck nodes stop answering their peers while it
	// lasts; held long enough on a master, its replicas' Sentinels (or
	// the cluster) promote another.
	Silences bool `json:"silences,omitempty"`
	// Stops: it stops what it strikes (a process, a node) and lets it go
	// on where it was at the heal: its own timers stop with it.
	Stops bool `json:"stops,omitempty"`
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
	// DelaysReplies: it holds back every reply the nodes send to the
	// struck client by the fault-start's By (its requests pass at once), so
	// a grant reaches the client at least By after the key was set.
	DelaysReplies bool `json:"delays_replies,omitempty"`
}

// The values of Effects.Promotes.
const (
	PromotesStruck = "struck"
	PromotesAny    = "any"
)

// EffectsOf is what the fault of a fault-start does: the effects it
// recorded, or, in a history recorded before fault-starts carried them,
// what Legacy says of its fault.
func EffectsOf(op Op) Effects {
	if op.Effects != nil {
		return *op.Effects
	}
	e := Legacy[op.Fault]
	// A fault was judged to act on clients alone by its target then (and,
	// by the failover check, a link fault by its name, with or without one).
	e.OnClients = e.OnClients || strings.HasPrefix(op.Target, "client:") || strings.HasPrefix(op.Target, "link:")
	return e
}

// Legacy are the effects of the faults of histories recorded before
// fault-starts carried them, by the names those faults had then: what the
// checkers read from the names (and the targets) at the time, so that an
// old run is judged as it was. A fault not named here claims nothing.
var Legacy = map[string]Effects{
	"link-delay": {OnClients: true}, "link-cut": {OnClients: true},
	"crash-client":     {Kills: true, Instant: true},
	"crash-in-acquire": {Kills: true, Instant: true}, "crash-in-release": {Kills: true, Instant: true},
	"pause-node":   {KeepsKeys: true, Silences: true, Stops: true},
	"pause-client": {Stops: true}, "pause-in-acquire": {Stops: true}, "pause-in-release": {Stops: true}, "pause-in-extend": {Stops: true}, "kill-connections": {KeepsKeys: true, Instant: true},
	"kill": {Silences: true, Kills: true}, "restart": {Silences: true, Kills: true},
	"isolate-primary": {Silences: true, BetweenNodes: true}, "isolate-replica": {Silences: true, BetweenNodes: true},
	"clock-jump": {MovesClock: true}, "sentinel-failover": {Promotes: PromotesAny},
	"cluster-failover": {Promotes: PromotesStruck}, "cluster-failover-force": {Promotes: PromotesStruck}, "cluster-failover-takeover": {Promotes: PromotesStruck},
}
