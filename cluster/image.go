package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/internal/suggest"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// Server is a Redis-compatible server deadbolt has an image recipe for:
// cluster/image/build.sh SERVER builds Image FROM scratch out of Debian's
// packages (`make image SERVER=NAME`).
type Server struct {
	// Name is what --server and `make image SERVER=` take.
	Name string
	// Image is the image build.sh tags.
	Image string
	// From is where the image's binaries come from.
	From string
}

// Servers are the servers deadbolt can run, the default first.
var Servers = []Server{
	{Name: "redis-7.0", Image: "deadbolt/redis:7.0", From: "Debian bookworm's redis-server (the host's packages)"},
	{Name: "redis-8.0", Image: "deadbolt/redis:8.0", From: "Debian trixie's redis-server (a debootstrapped root file system)"},
	{Name: "valkey-8.1", Image: "deadbolt/valkey:8.1", From: "Debian trixie's valkey-server (a debootstrapped root file system)"},
}

// DefaultImage is built FROM scratch by `make image` out of Debian's Redis
// packages (topology.DefaultImage).
const DefaultImage = topology.DefaultImage

// ImageEnv selects another image (topology.ImageEnv).
const ImageEnv = topology.ImageEnv

// ServerNames are the known servers' names, comma-separated.
func ServerNames() string { return strings.Join(serverNames(), ", ") }

func serverNames() []string {
	names := make([]string, len(Servers))
	for i, s := range Servers {
		names[i] = s.Name
	}
	return names
}

// LookupServer is the server named name, or an error listing the known ones.
func LookupServer(name string) (Server, error) {
	for _, s := range Servers {
		if s.Name == name {
			return s, nil
		}
	}
	return Server{}, fmt.Errorf("unknown server %q (known: %s)%s", name, ServerNames(), suggest.Hint(name, serverNames()))
}

// ServerImage is the image of the server named name; "" is Image(): the
// image DEADBOLT_REDIS_IMAGE names, or the default server's.
func ServerImage(name string) (string, error) {
	if name == "" {
		return Image(), nil
	}
	s, err := LookupServer(name)
	if err != nil {
		return "", err
	}
	return s.Image, nil
}

// Image is the Redis image a run uses when no server is named
// (topology.Image).
func Image() string { return topology.Image() }

// ServerOf is the known server whose image image is ("" when none is).
func ServerOf(image string) string {
	for _, s := range Servers {
		if s.Image == image {
			return s.Name
		}
	}
	return ""
}

// imageMissing is the error for an image the engine does not have, with
// the command that builds it.
func imageMissing(image string, err error) error {
	switch s := ServerOf(image); {
	case image == DefaultImage:
		return fmt.Errorf("image %s is not built: run `deadbolt image` (in a checkout: make image) (%v)", image, err)
	case s != "":
		return fmt.Errorf("image %s (server %s) is not built: run `deadbolt image --server %s` (in a checkout: make image SERVER=%s) (%v)", image, s, s, s, err)
	}
	return fmt.Errorf("image %s (from %s) is not available: %v", image, ImageEnv, err)
}

// RecipeLabel is the label build.sh gives every image it builds: the hash
// of the recipe it was built from.
const RecipeLabel = "org.deadbolt.recipe"

// CheckBuilt checks that image is one deadbolt built (build.sh's label on
// it), for a scenario file that names an image: a file is data that
// travels, and must start no image the person running it did not choose.
func CheckBuilt(ctx context.Context, image string) error {
	d, err := newDocker(ctx)
	if err != nil {
		return err
	}
	defer d.cli.Close()
	inspect, err := d.cli.ImageInspect(ctx, image)
	if err != nil {
		if ServerOf(image) != "" {
			return imageMissing(image, err)
		}
		return fmt.Errorf("image %s is not on the engine, and none can be pulled (%v)", image, err)
	}
	if inspect.Config == nil || inspect.Config.Labels[RecipeLabel] == "" {
		return fmt.Errorf("image %s was not built by deadbolt (it has no %s label): a scenario file may name only an image deadbolt built (deadbolt image --server NAME; %s chooses another for every run)", image, RecipeLabel, ImageEnv)
	}
	return nil
}

// checkImage fails early, with the fix, when the image is not on the engine:
// nothing can be pulled here, so a missing image would otherwise surface as a
// registry error deep inside testcontainers.
func (d *docker) checkImage(ctx context.Context, image string) error {
	if _, err := d.cli.ImageInspect(ctx, image); err != nil {
		return imageMissing(image, err)
	}
	return nil
}

// CheckImage is checkImage for a caller with no cluster yet: a command
// that asks for a server checks its image before it makes a store or
// starts anything.
func CheckImage(ctx context.Context, image string) error {
	d, err := newDocker(ctx)
	if err != nil {
		return err
	}
	defer d.cli.Close()
	return d.checkImage(ctx, image)
}

// ServerVersion is what a node says of itself in INFO server.
type ServerVersion struct {
	// Name is "valkey" when the node says server_name:valkey, else "redis".
	Name string `json:"name"`
	// Version is valkey_version on Valkey, redis_version on Redis.
	Version string `json:"version"`
	// RedisVersion is redis_version: on Valkey the Redis version it
	// claims compatibility with (7.2.4 on Valkey 8).
	RedisVersion string `json:"redis_version"`
}

// String is "redis 8.0.2", or "valkey 8.1.1 (redis_version 7.2.4)".
func (v ServerVersion) String() string {
	if v.Version == "" {
		return ""
	}
	s := v.Name + " " + v.Version
	if v.Name != "redis" && v.RedisVersion != "" {
		s += " (redis_version " + v.RedisVersion + ")"
	}
	return s
}

// ParseServerVersion reads INFO server's reply.
func ParseServerVersion(info string) ServerVersion {
	f := infoFields(info)
	v := ServerVersion{Name: "redis", Version: f["redis_version"], RedisVersion: f["redis_version"]}
	if f["server_name"] == "valkey" || f["valkey_version"] != "" {
		v.Name, v.Version = "valkey", f["valkey_version"]
	}
	return v
}

// ServerVersion asks the first lock-service Redis node that answers for
// INFO server.
func (c *Cluster) ServerVersion(ctx context.Context) (ServerVersion, error) {
	var last error = fmt.Errorf("no Redis node")
	for _, n := range c.Nodes {
		if n.Role != RoleRedis {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		rdb := n.Client()
		info, err := rdb.Info(ctx, "server").Result()
		rdb.Close()
		cancel()
		if err != nil {
			last = fmt.Errorf("INFO server on %s: %w", n.Name, err)
			continue
		}
		return ParseServerVersion(info), nil
	}
	return ServerVersion{}, last
}
