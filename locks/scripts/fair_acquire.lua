-- Fair lock acquire.
-- KEYS: the lock hash {owner: hold count}, the queue (list of waiting
-- owners, head first), the waiters' timeouts (zset owner -> server time in
-- ms when its place lapses), the grant counter.
-- ARGV: owner, ttl (ms), mode, patience (ms a waiter keeps its place without
-- looking again), waiter channel prefix.
-- Modes: "reenter": only the current owner may pass. "try": take the lock
-- when it is free and nobody waits; never queue. "wait": take the lock when
-- it is free and we are the head of the queue (or nobody waits); otherwise
-- join the queue at its tail, or refresh our place in it.
-- Returns {1, hold count, grant number} when granted (grant number 0 on a
-- re-entry), {0, ms worth waiting before looking again} when refused.
local lock, queue, timeouts, grants = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, ttl, mode, patience, prefix = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
-- TIME before writes: effects replication (always on since Redis 7).
redis.replicate_commands()
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Waiters that stopped looking have left.
for _, w in ipairs(redis.call("ZRANGEBYSCORE", timeouts, "-inf", now)) do
  redis.call("LREM", queue, 0, w)
  redis.call("ZREM", timeouts, w)
end

if redis.call("HEXISTS", lock, owner) == 1 then
  local n = redis.call("HINCRBY", lock, owner, 1)
  redis.call("PEXPIRE", lock, ttl)
  return {1, n, 0}
end
if mode == "reenter" then
  return {0, -2}
end

local held = redis.call("EXISTS", lock) == 1
local head = redis.call("LINDEX", queue, 0)
if not held and (head == false or head == owner) then
  if head == owner then
    redis.call("LPOP", queue)
  end
  redis.call("ZREM", timeouts, owner)
  redis.call("HSET", lock, owner, 1)
  redis.call("PEXPIRE", lock, ttl)
  return {1, 1, redis.call("INCR", grants)}
end

if mode == "wait" then
  if redis.call("ZADD", timeouts, now + patience, owner) == 1 then
    redis.call("RPUSH", queue, owner)
  end
  head = redis.call("LINDEX", queue, 0)
end
if held then
  return {0, math.max(redis.call("PTTL", lock), 0)}
end
-- Free, but it is the head's turn: make sure the head knows, and look
-- again when its place would lapse.
redis.call("PUBLISH", prefix .. head, "unlock")
local lapse = redis.call("ZSCORE", timeouts, head)
if lapse then
  return {0, math.max(tonumber(lapse) - now, 0)}
end
return {0, 0}
