module deadbolt-driver/redsync4

go 1.26.8

require (
	github.com/deadbolt-lab/deadbolt v0.0.0-00010101000000-000000000000
	github.com/go-redis/redis/v8 v8.11.5
	github.com/go-redsync/redsync/v4 v4.18.1
	github.com/redis/go-redis/v9 v9.23.0
	golang.org/x/mod v0.43.0
)

require (
	github.com/agnivade/levenshtein v1.2.2 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/shlex v0.0.0-20191202100458-e7afc7fbc510 // indirect
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.0 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/deadbolt-lab/deadbolt => ../../..

// The library's version, whatever deadbolt itself requires of it.
replace github.com/go-redsync/redsync/v4 => github.com/go-redsync/redsync/v4 v4.0.3
