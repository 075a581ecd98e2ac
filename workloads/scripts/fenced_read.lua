-- A fencing-aware register KEYS[1] (a hash: value, fence). Every access
-- carries the lease's fencing token ARGV[1]; a token lower than the highest
-- the register has seen is rejected, and the highest is remembered, so a
-- holder whose lease was taken over can neither read nor write once the new
-- holder has touched the register. Returns the value.
local seen = tonumber(redis.call("HGET", KEYS[1], "fence") or "0")
local token = tonumber(ARGV[1])
if token < seen then
  return redis.error_reply("STALE fencing token " .. token .. " < " .. seen)
end
redis.call("HSET", KEYS[1], "fence", token)
return tonumber(redis.call("HGET", KEYS[1], "value") or "0")
