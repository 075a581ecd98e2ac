-- Reentrant lock acquire. KEYS[1]: the lock, a hash {owner: hold count}.
-- ARGV: owner, ttl (ms), mode ("reenter": only the current owner may pass;
-- "try" or "wait": a free lock is taken too).
-- Returns {1, hold count} when granted, {0, PTTL of the lock} when refused.
local lock, owner, ttl, mode = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
if redis.call("HEXISTS", lock, owner) == 1 then
  local n = redis.call("HINCRBY", lock, owner, 1)
  redis.call("PEXPIRE", lock, ttl)
  return {1, n}
end
if mode ~= "reenter" and redis.call("EXISTS", lock) == 0 then
  redis.call("HSET", lock, owner, 1)
  redis.call("PEXPIRE", lock, ttl)
  return {1, 1}
end
return {0, redis.call("PTTL", lock)}
