-- Reentrant lock release. KEYS[1]: the lock hash.
-- ARGV: owner, ttl (ms), all ("1": drop every hold of owner at once), the
-- unlock channel.
-- Returns -1 when owner does not hold the lock, else the holds left: more
-- than 0 keeps the lock (its TTL renewed); 0 deletes it and wakes waiters.
local lock, owner, ttl, all, channel = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]
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
redis.call("DEL", lock)
redis.call("PUBLISH", channel, "unlock")
return 0
