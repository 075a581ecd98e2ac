package drivers

func init() {
	RegisterLibrary(Library{
		Name:     "bsm",
		Summary:  "bsm/redislock: Lua SET NX PX obtain on one master group over go-redis v9 with its default retries, Refresh, owner-checked release",
		Upstream: "https://github.com/bsm/redislock/issues",
		// v0.9.3 lets the caller choose the token; v0.9.4 re-obtains a key
		// that holds it; v0.10.0 obtains with MSETNX and MSET.
		Known: []string{"v0.9.0", "v0.9.3", "v0.9.4", "v0.10.0"},
		Go: []GoModule{
			{Module: "github.com/bsm/redislock", Major: "v1", Adapter: "drivers/go/bsm"},
		},
	})
}
