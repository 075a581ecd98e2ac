module deadbolt-driver/redlockgo

go 1.26.8

require (
	github.com/amyangfei/redlock-go/v2 v2.0.2
	github.com/amyangfei/redlock-go/v3 v3.0.0
	github.com/deadbolt-lab/deadbolt v0.0.0-00010101000000-000000000000
	github.com/go-redis/redis/v8 v8.11.5
)

require (
	github.com/agnivade/levenshtein v1.2.2 // indirect
	github.com/cespare/xxhash v1.1.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coocood/freecache v1.1.1 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/shlex v0.0.0-20191202100458-e7afc7fbc510 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/deadbolt-lab/deadbolt => ../../..

// The library's version, whatever deadbolt itself requires of it.
replace github.com/amyangfei/redlock-go/v3 => github.com/amyangfei/redlock-go/v3 v3.0.0
