-- Watchdog renewal of a reentrant or fair lock. KEYS[1]: the lock hash.
-- ARGV: owner, ttl (ms). Returns 1 when owner still holds it (TTL reset),
-- 0 when the lock is gone or another owner's.
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
return 0
