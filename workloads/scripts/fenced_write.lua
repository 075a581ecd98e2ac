-- Write ARGV[2] to the fencing-aware register KEYS[1] under token ARGV[1]
-- (see fenced_read.lua). Returns the value it replaced.
local seen = tonumber(redis.call("HGET", KEYS[1], "fence") or "0")
local token = tonumber(ARGV[1])
if token < seen then
  return redis.error_reply("STALE fencing token " .. token .. " < " .. seen)
end
local prev = tonumber(redis.call("HGET", KEYS[1], "value") or "0")
redis.call("HSET", KEYS[1], "fence", token, "value", ARGV[2])
return prev
