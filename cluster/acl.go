package cluster

import (
	"context"
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

// lockCommands are the commands deadbolt's locks, workloads and adapters
// are known to send, each with who sends it. Every data and scripting
// command is the lock user's anyway (lockRules); this list keeps those
// that Redis files under @admin or @dangerous (INFO, ROLE) and documents
// the rest. A command run inside a script counts too (Redis checks ACLs in
// scripts): every redis.call of locks/scripts and workloads/scripts is
// here (a test reads them).
var lockCommands = []string{
	// simple, redlock, multilock, redsync, bsm, rueidislock, redis-py:
	// SET NX PX (PXAT); broken/: SETNX, then PEXPIRE; bsm: GETRANGE, and
	// from v0.10 MSETNX, MSET and MGET (a lock over several keys).
	"set", "setnx", "get", "del", "exists", "pexpire", "pexpireat", "pttl", "getrange", "mset", "msetnx", "mget",
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

// lockRules are the lock user's rights on a Redis node: every command but
// the administrative and dangerous ones (CONFIG, DEBUG, SHUTDOWN, REPLICAOF,
// MONITOR, CLIENT KILL, FLUSHALL, KEYS ...), plus lockCommands. The ACL is
// there to keep clients away from what would break the harness, not to
// refuse a lock library's data commands (a fair lock that queues with
// LPUSH, a lock kept in a sorted set): a refused command is a run that
// tested the harness's rules instead of the lock, and such a run is
// unknown (Cluster.LockRefusals). Keys and channels: all of them, because
// each library names its own (k:fence, deadbolt_lock_queue:{k},
// rueidislock:0:k, redisson_lock__channel:{k}).
func lockRules() string {
	return "on resetkeys ~* resetchannels &* -@all +@all -@admin -@dangerous +" + strings.Join(lockCommands, " +")
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
// deadbolt starts, of any topology: the default user with the lock user's
// rights and password (never without a password), the four users above, protected mode on, and the replication user for when the node is
// (or becomes) a replica. A topology appends them to its nodes' command
// lines (redisArgs does).
func (s Secrets) RedisArgs() []string {
	args := []string{
		"--protected-mode", "yes",
		"--masteruser", ReplicationUser, "--masterauth", s.Replication,
	}
	for _, u := range []struct{ name, password, rules string }{
		// A library that sends only a password (AUTH password: redigo
		// before 1.8, go-zero's RedisConf, old redis-py) is the lock user
		// too, under Redis's name for a user not named.
		{"default", s.Lock, "resetpass " + lockRules()},
		{AdminUser, s.Admin, "on ~* &* +@all"},
		{LockUser, s.Lock, lockRules()},
		{ReplicationUser, s.Replication, replicationRules},
		{SentinelUser, s.Sentinel, sentinelRules},
	} {
		// The password after the rules, which may reset the default's.
		args = append(args, "--user", u.name)
		args = append(args, strings.Fields(u.rules)...)
		if u.password != "" {
			args = append(args, ">"+u.password)
		}
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

// aclLogLen is Redis's acllog-max-len default: ACL LOG without a count
// gives only the last ten entries.
const aclLogLen = 128

// LockRefusals reads the ACL LOG of every Redis node deadbolt started and
// returns what it refused the lock user (and the default user, its other
// name), one line per node and command: "redis-1 refused user
// deadbolt-lock's command lpush (count 3)". A run with any is unknown: it
// tested deadbolt's rules, not the lock. A node restarted during the run
// forgot the log of before its restart; the NOPERM replies in the history
// cover that. On an attached cluster the users and their log are the
// owner's, and nothing is read.
func (c *Cluster) LockRefusals(ctx context.Context) ([]string, error) {
	if c.target != nil {
		return nil, nil
	}
	var out []string
	for _, n := range c.ByRole(RoleRedis) {
		rdb := n.PatientClient()
		entries, err := rdb.ACLLog(ctx, aclLogLen).Result()
		rdb.Close()
		if err != nil {
			return out, fmt.Errorf("ACL LOG on %s: %w", n.Name, err)
		}
		for _, e := range entries {
			if e.Username != LockUser && e.Username != "default" {
				continue
			}
			out = append(out, fmt.Sprintf("%s refused user %s's %s %s (count %d)", n.Name, e.Username, e.Reason, e.Object, e.Count))
		}
	}
	return out, nil
}
