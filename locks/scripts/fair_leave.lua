-- A fair lock waiter gives up.
-- KEYS: the lock hash, the queue, the waiters' timeouts (as fair_acquire).
-- ARGV: owner, waiter channel prefix.
-- Takes owner out of the queue; when the lock is free, wakes the new head
-- (owner may have been the head the lock was waiting for).
-- Returns how many places owner had (0 or 1).
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local owner, prefix = ARGV[1], ARGV[2]
local n = redis.call("LREM", queue, 0, owner)
redis.call("ZREM", timeouts, owner)
if redis.call("EXISTS", lock) == 0 then
  local head = redis.call("LINDEX", queue, 0)
  if head then
    redis.call("PUBLISH", prefix .. head, "unlock")
  end
end
return n
