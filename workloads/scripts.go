package workloads

import (
	"embed"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// script loads an embedded Lua script of a resource by file name.
func script(name string) *redis.Script {
	src, err := scriptFS.ReadFile("scripts/" + name)
	if err != nil {
		panic("workloads: missing script " + name)
	}
	return redis.NewScript(string(src))
}
