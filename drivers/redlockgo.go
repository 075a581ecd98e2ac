package drivers

func init() {
	RegisterLibrary(Library{
		Name:     "redlock-go",
		Summary:  "amyangfei/redlock-go: Redlock over an odd number of independent masters, go-redis v8 clients of its own, no extend",
		Upstream: "https://github.com/amyangfei/redlock-go/issues",
		// Of the tags of /v2 and /v3 the module proxy serves v2.0.2 and
		// v3.0.0 (v2.0.0 and v2.0.3 are refused).
		Known: []string{"v2.0.2", "v3.0.0"},
		Go: []GoModule{
			{Module: "github.com/amyangfei/redlock-go/v2", Major: "v2", Adapter: "drivers/go/redlockgo", Tags: "redlockgo_v2"},
			{Module: "github.com/amyangfei/redlock-go/v3", Major: "v3", Adapter: "drivers/go/redlockgo"},
		},
	})
}
