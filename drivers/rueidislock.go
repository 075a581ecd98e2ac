package drivers

func init() {
	RegisterLibrary(Library{
		Name:     "rueidislock",
		Summary:  "redis/rueidis's rueidislock: SET NX PXAT by the client's clock, extended by itself every validity/2, loss seen through client-side caching",
		Upstream: "https://github.com/redis/rueidis/issues",
		Known:    []string{"v1.0.18", "v1.0.19", "v1.0.69", "v1.0.70", "v1.0.79"},
		Go: []GoModule{
			{Module: "github.com/redis/rueidis", Major: "v1", Adapter: "drivers/go/rueidislock"},
		},
	})
}
