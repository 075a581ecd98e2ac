-- Extend the lock only when it still holds our token (KEYS[1], ARGV[1]):
-- its TTL becomes ARGV[2] ms from now.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
