package drivers

func init() {
	Register(Driver{
		Name:        "redispy",
		Summary:     "redis-py's own redis.lock.Lock, unmodified (lock redispy)",
		Interpreter: "/usr/bin/python3",
		Script:      "drivers/redispy/driver.py",
		Needs:       "Debian's python3-redis for /usr/bin/python3 (apt-get install python3-redis; make scenario and make test install it)",
	})
}
