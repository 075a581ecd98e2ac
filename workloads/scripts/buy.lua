-- Sell one unit of the stock KEYS[1] to user ARGV[1], recording the order in
-- the hash KEYS[2] {user: orders}. The stock check and decrement are atomic,
-- as a shop's conditional update is; whether the user already ordered is the
-- application's check, made under the user's lock. Returns 1 sold, 0 sold out.
local stock = tonumber(redis.call("GET", KEYS[1]) or "0")
if stock <= 0 then
  return 0
end
redis.call("DECR", KEYS[1])
redis.call("HINCRBY", KEYS[2], ARGV[1], 1)
return 1
