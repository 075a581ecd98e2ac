package locks

import "github.com/redis/go-redis/v9"

func init() {
	RegisterReentrant("fair", "Redisson RFairLock: the reentrant lock plus a FIFO queue of waiters with timeouts; grants in queue order, numbered (Seq); watchdog, Lost on loss", newHashFactory(fairKind, true))
	InDebate("fair", 4)
	RegisterReentrant("fair-lease", "fair without a watchdog: a fixed lease of TTL, Lost closed at the deadline", newHashFactory(fairKind, false))
}

// The fair lock is the reentrant lock (reentrant.go: owner identity,
// re-entry, watchdog, Lost) with a line to stand in:
//
//   - a waiter that is refused joins the queue's tail; a free lock goes only
//     to the queue's head (or to anyone when nobody waits);
//   - every grant of a fresh hold increments a counter kept beside the lock,
//     and the lease carries that number as Seq, so a checker can compare
//     grant order with queue order;
//   - each waiter keeps its place by looking again (each try refreshes its
//     timeout in a zset, server time + patience); a waiter that stopped
//     looking (crashed, paused) is evicted by the next script that runs. This
//     differs from Redisson, which estimates each waiter's timeout from the
//     one before it and the client's clock; here only the Redis server's
//     clock counts;
//   - a release wakes the head alone, on a channel of its own;
//   - a waiter that gives up (Wait ran out, context ended) leaves the queue,
//     and wakes the new head if the lock is free.
var fairKind = &hashKind{
	name:    "fair",
	acquire: script("fair_acquire.lua"),
	release: script("fair_release.lua"),
	leave:   script("fair_leave.lua"),
	keys: func(key string) []string {
		return []string{key, FairQueueKey(key), FairTimeoutKey(key), fairGrantKey(key)}
	},
	channelArg: fairChannelPrefix,
	channel:    func(key, owner string) string { return fairChannelPrefix(key) + owner },
}

// FairQueueKey is the list of a fair lock's waiters, head first.
func FairQueueKey(key string) string { return "deadbolt_lock_queue:{" + key + "}" }

// FairTimeoutKey is the zset of a fair lock's waiters by the server time
// (ms) at which their place lapses.
func FairTimeoutKey(key string) string { return "deadbolt_lock_timeout:{" + key + "}" }

func fairGrantKey(key string) string { return "deadbolt_lock_grants:{" + key + "}" }

func fairChannelPrefix(key string) string { return "deadbolt_lock__channel:{" + key + "}:" }

// FairVariant is the fair lock (watchdog included) with another acquire
// script, which takes the same KEYS and ARGV and answers as
// scripts/fair_acquire.lua does: for variants that break its order on
// purpose (locks/broken).
func FairVariant(name, acquireScript string) Factory {
	k := *fairKind
	k.name, k.acquire = name, redis.NewScript(acquireScript)
	return newHashFactory(&k, true)
}
