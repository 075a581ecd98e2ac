package drivers

func init() {
	RegisterLibrary(Library{
		Name:     "gozero",
		Summary:  "go-zero's RedisLock (core/stores/redis): SET NX PX with an owner-checked release; Acquire again keeps it",
		Upstream: "https://github.com/zeromicro/go-zero/issues",
		Known:    []string{"v1.3.1", "v1.3.2", "v1.10.3"},
		Go: []GoModule{
			{Module: "github.com/zeromicro/go-zero", Major: "v1", Adapter: "drivers/go/gozero"},
		},
	})
}
