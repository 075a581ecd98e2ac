package drivers

func init() {
	RegisterLibrary(Library{
		Name:     "redsync",
		Summary:  "go-redsync/redsync: SET NX PX on one master or Redlock over N, Extend and Unlock through the mutex that locked",
		Upstream: "https://github.com/go-redsync/redsync/issues",
		Known:    []string{"v1.2.0", "v1.3.0", "v4.0.3", "v4.0.4", "v4.3.0", "v4.4.1", "v4.18.1"},
		Go: []GoModule{
			{Module: "github.com/go-redsync/redsync", Major: "v1", Adapter: "drivers/go/redsync1",
				Since: []VersionTags{{Version: "v1.4.0", Tags: "redsync1_errors"}}},
			{Module: "github.com/go-redsync/redsync/v4", Major: "v4", Adapter: "drivers/go/redsync4",
				Until: []VersionTags{{Version: "v4.5.0", Tags: "redsync4_notimeoutfactor"}, {Version: "v4.8.1", Tags: "redsync4_goredis8"}}},
		},
	})
}
