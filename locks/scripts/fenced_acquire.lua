-- Take the lock KEYS[1] for token ARGV[1] for ARGV[2] ms and, only when that
-- succeeded, draw the next fencing token from the counter KEYS[2]. Returns
-- the token, or 0 when the lock was held (a refusal consumes no token).
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return redis.call("INCR", KEYS[2])
end
return 0
