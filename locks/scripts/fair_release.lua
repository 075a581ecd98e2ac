-- Fair lock release.
-- KEYS: the lock hash, the queue, the waiters' timeouts (as fair_acquire).
-- ARGV: owner, ttl (ms), all ("1": drop every hold of owner at once),
-- waiter channel prefix.
-- Returns -1 when owner does not hold the lock, else the holds left: more
-- than 0 keeps the lock (its TTL renewed); 0 deletes it and wakes the live
-- head of the queue on its own channel.
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local owner, ttl, all, prefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- TIME before writes: effects replication (always on since Redis 7).
redis.replicate_commands()
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call("HEXISTS", lock, owner) == 0 then
  return -1
end
if all ~= "1" then
  local n = redis.call("HINCRBY", lock, owner, -1)
  if n > 0 then
    redis.call("PEXPIRE", lock, ttl)
    return n
  end
end

-- Wake a waiter that is still there: drop those whose place lapsed.
for _, w in ipairs(redis.call("ZRANGEBYSCORE", timeouts, "-inf", now)) do
  redis.call("LREM", queue, 0, w)
  redis.call("ZREM", timeouts, w)
end
redis.call("DEL", lock)
local head = redis.call("LINDEX", queue, 0)
if head then
  redis.call("PUBLISH", prefix .. head, "unlock")
end
return 0
