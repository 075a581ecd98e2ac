package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// Who may do what on the nodes deadbolt starts. Every Redis node (a
// Sentinel group's master and replicas, an independent master, the
// resource node, and any topology added later) and every Sentinel asks
// for a password: the default user is off, and each party has a user of
// its own with the rights it needs. Protected mode stays on (it lets in
// only clients that authenticate, since the default user has no
// "nopass"). The passwords are drawn per run (NewSecrets) and live only in
// the Cluster, the nodes' command lines and sentinel.conf, and the
// Endpoints handed to client processes; never in scenario.json.
const (
	// AdminUser is the harness's own user, with every right: health
	// checks, INFO, CONFIG, SENTINEL FAILOVER, the nemesis.
	AdminUser = "deadbolt-admin"
	// LockUser is what lock users (client processes, drivers, the
	// workload's resource access) authenticate as, on Redis nodes and on
	// Sentinels alike; its rights are lockRules and sentinelLockRules.
	LockUser = "deadbolt-lock"
	// ReplicationUser is what a replica authenticates to its master as
	// (masteruser); every node has it set, since Sentinel may make any
	// master a replica.
	ReplicationUser = "deadbolt-replication"
	// SentinelUser is what a Sentinel authenticates as, to the Redis nodes
	// it monitors (auth-user) and to its peer Sentinels (sentinel-user).
	SentinelUser = "deadbolt-sentinel"
)

// Secrets are one run's passwords, one per user.
type Secrets struct {
	Admin, Lock, Replication, Sentinel string
}

// NewSecrets draws a run's passwords from crypto/rand: 32 hex digits
// each, which need no quoting on a command line or in a config file.
func NewSecrets() (Secrets, error) {
	var s Secrets
	for _, p := range []*string{&s.Admin, &s.Lock, &s.Replication, &s.Sentinel} {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return Secrets{}, fmt.Errorf("draw a password: %w", err)
		}
		*p = hex.EncodeToString(b)
	}
	return s, nil
}

// connectionRules are what any client needs to open and keep a
// connection: HELLO, AUTH, PING, SELECT, CLIENT SETNAME, CLIENT SETINFO
// (Redis 7.2; go-redis and rueidis send it), CLIENT TRACKING (rueidis's
// client-side caching), QUIT, RESET, by category rather than by name,
// because each library and Redis version sends its own; minus the
// administrative and dangerous ones of that category (CLIENT KILL, LIST,
// PAUSE, NO-EVICT, UNBLOCK).
const connectionRules = "-@all +@connection -@admin -@dangerous"

// lockCommands are the data commands a lock user runs, on the lock
// service and on the resource node, each with who sends it. A command run
// inside a script counts too (Redis checks ACLs in scripts): every
// redis.call of locks/scripts and workloads/scripts is here (a test reads
// them), and so are those of the adapters' libraries.
var lockCommands = []string{
	// simple, redlock, multilock, redsync, bsm, rueidislock, redis-py:
	// SET NX PX (PXAT); broken/: SETNX, then PEXPIRE; bsm: GETRANGE.
	"set", "setnx", "get", "del", "exists", "pexpire", "pexpireat", "pttl", "getrange",
	// reentrant, fair (hashes, the waiters' queue and timeouts, grants),
	// fenced (the fence counter); the workloads' registers and orders.
	"incr", "decr", "hset", "hget", "hexists", "hincrby",
	"lindex", "lpop", "lrem", "rpush",
	"zadd", "zrangebyscore", "zrem", "zscore",
	"time",
	// Scripts: go-redis and rueidis send EVALSHA, then EVAL on NOSCRIPT;
	// redis-py loads on NOSCRIPT; the workloads load theirs at setup.
	"eval", "evalsha", "script|load", "script|exists",
	// reentrant and fair: a release publishes, a waiter subscribes.
	"publish", "subscribe", "unsubscribe",
	// simple-wait: WAIT for a replica's acknowledgement.
	"wait",
	// orders: the harness sets the stock up in a transaction, and at the
	// end reads every user's orders.
	"multi", "exec", "discard", "hkeys",
	// rueidis asks a master Sentinel named for its ROLE before using it.
	"role",
	// A Redis Cluster client reads the slot map (go-redis CLUSTER SLOTS
	// or SHARDS, redis-py CLUSTER SLOTS and COMMAND), follows ASK with
	// ASKING, and sends READONLY/READWRITE on replica connections.
	// redis-py's RedisCluster (4.3) asks each node INFO (cluster_enabled)
	// before its CLUSTER SLOTS, and gives up on the cluster when INFO is
	// refused.
	"cluster|slots", "cluster|shards", "cluster|nodes", "cluster|info", "cluster|keyslot",
	"asking", "readonly", "readwrite", "command", "info",
}

// lockChannels is where the reentrant and fair locks publish and listen
// (locks/reentrant.go, locks/fair.go); no other lock uses pub/sub on
// Redis nodes.
const lockChannels = "&deadbolt_lock__channel:*"

// lockRules are the lock user's rights on a Redis node. Keys: every key
// (~*), because the keys a lock touches are named by the scenario (any
// string: scenario.json, --keys, a dbtest caller) and derived from those
// names by each library in its own way (k:fence, deadbolt_lock_queue:{k},
// rueidislock:0:k), and the resource's by the workload (counter:k, stock,
// orders): no narrower pattern admits every lock. What a lock user must not
// do is kept from it by the commands: no KEYS or SCAN, no FLUSHALL, no
// CONFIG, DEBUG, SHUTDOWN, REPLICAOF, no MONITOR or CLIENT KILL.
func lockRules() string {
	return "on resetkeys ~* resetchannels " + lockChannels + " " + connectionRules + " +" + strings.Join(lockCommands, " +")
}

// replicationRules are what a replica runs on its master, as Redis's ACL
// documentation lists them.
const replicationRules = "on resetkeys resetchannels -@all +psync +replconf +ping"

// sentinelRules are what a Sentinel runs on a Redis node, as Redis's ACL
// documentation lists them: it reads INFO and ROLE, publishes and
// subscribes hello messages (on __sentinel__:hello, hence every channel),
// and on a failover turns a node into a master or replica (SLAVEOF and
// CONFIG REWRITE in MULTI/EXEC), killing clients and scripts in its way.
const sentinelRules = "on resetkeys allchannels -@all +multi +slaveof +ping +exec +subscribe +config|rewrite +role +publish +info +client|setname +client|kill +script|kill"

// RedisArgs are the ACL and authentication arguments of every Redis node
// deadbolt starts, of any topology: the default user off, the four users
// above, protected mode on, and the replication user for when the node is
// (or becomes) a replica. A topology appends them to its nodes' command
// lines (redisArgs does).
func (s Secrets) RedisArgs() []string {
	args := []string{
		"--protected-mode", "yes",
		"--masteruser", ReplicationUser, "--masterauth", s.Replication,
	}
	for _, u := range []struct{ name, password, rules string }{
		{"default", "", "off resetpass resetkeys resetchannels -@all"},
		{AdminUser, s.Admin, "on ~* &* +@all"},
		{LockUser, s.Lock, lockRules()},
		{ReplicationUser, s.Replication, replicationRules},
		{SentinelUser, s.Sentinel, sentinelRules},
	} {
		args = append(args, "--user", u.name)
		if u.password != "" {
			args = append(args, ">"+u.password)
		}
		args = append(args, strings.Fields(u.rules)...)
	}
	return args
}

// sentinelLockRules are a lock user's rights on a Sentinel: ask for the
// master (go-redis, rueidis and redis-py each ask their own way: the
// master's address, the masters' states, the peer Sentinels, the
// replicas) and follow Sentinel's announcements (+switch-master and the
// like: every channel, which on a Sentinel carries only its events).
const sentinelLockRules = "on allchannels " + connectionRules +
	" +sentinel|get-master-addr-by-name +sentinel|masters +sentinel|master +sentinel|sentinels" +
	" +sentinel|replicas +sentinel|slaves +subscribe +unsubscribe +psubscribe +punsubscribe"

// sentinelPeerRules are what a Sentinel runs on its peers: PING, the
// vote on a master's state (SENTINEL IS-MASTER-DOWN-BY-ADDR) and hello
// messages (PUBLISH).
const sentinelPeerRules = "on allchannels " + connectionRules + " +ping +publish +sentinel|is-master-down-by-addr"

// SentinelConf are the authentication lines of a Sentinel's configuration
// for the master group group: its own users (default off, the harness's
// admin, lock users, peer Sentinels), protected mode on, and the user it
// authenticates as to the Redis nodes and to its peers.
func (s Secrets) SentinelConf(group string) []string {
	return []string{
		"protected-mode yes",
		"user default off resetpass resetchannels -@all",
		"user " + AdminUser + " on >" + s.Admin + " ~* &* +@all",
		"user " + LockUser + " >" + s.Lock + " " + sentinelLockRules,
		"user " + SentinelUser + " >" + s.Sentinel + " " + sentinelPeerRules,
		"sentinel auth-user " + group + " " + SentinelUser,
		"sentinel auth-pass " + group + " " + s.Sentinel,
		"sentinel sentinel-user " + SentinelUser,
		"sentinel sentinel-pass " + s.Sentinel,
	}
}

// Admin is the harness's user and password on every node of the cluster
// (Redis and Sentinel alike): AdminUser on the nodes deadbolt starts, the
// target's Redis credentials on an attached cluster.
func (c *Cluster) Admin() (username, password string) {
	if c.target != nil {
		return c.target.Username, c.target.Password
	}
	return AdminUser, c.secrets.Admin
}
