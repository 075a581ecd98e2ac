module deadbolt-driver/rueidislock

go 1.26.8

require (
	github.com/deadbolt-lab/deadbolt v0.0.0-00010101000000-000000000000
	github.com/redis/rueidis v1.0.79
)

require (
	github.com/agnivade/levenshtein v1.2.2 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/shlex v0.0.0-20191202100458-e7afc7fbc510 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/mod v0.43.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/deadbolt-lab/deadbolt => ../../..

// The library's version, whatever deadbolt itself requires of it.
replace github.com/redis/rueidis => github.com/redis/rueidis v1.0.69
