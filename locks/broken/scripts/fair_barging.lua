-- BROKEN fair lock acquire: it keeps the fair lock's queue, but a free lock
-- goes to whoever asks first, in line or not (barging), as a lock that
-- forgets to look at the queue's head does. Same KEYS, ARGV and replies as
-- locks/scripts/fair_acquire.lua.
local lock, queue, timeouts, grants = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, ttl, mode, patience, prefix = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
redis.replicate_commands()
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

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

if redis.call("EXISTS", lock) == 0 then
  -- The mistake: no look at the queue's head.
  redis.call("LREM", queue, 0, owner)
  redis.call("ZREM", timeouts, owner)
  redis.call("HSET", lock, owner, 1)
  redis.call("PEXPIRE", lock, ttl)
  return {1, 1, redis.call("INCR", grants)}
end

if mode == "wait" then
  if redis.call("ZADD", timeouts, now + patience, owner) == 1 then
    redis.call("RPUSH", queue, owner)
  end
end
return {0, math.max(redis.call("PTTL", lock), 0)}
