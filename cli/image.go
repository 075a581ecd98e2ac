package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/drivers"
)

// cmdImage is `deadbolt image [--server NAME]`: the server's image built
// FROM scratch out of Debian's packages by the recipe deadbolt carries
// (cluster/image/build.sh, which installs what it needs with apt-get), as
// `make image` builds it in a checkout: from any directory, with the
// binary alone. It does nothing when the image exists and was built from
// this recipe.
func cmdImage(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	server := fs.String("server", cluster.Servers[0].Name, "the server to build the image of: "+cluster.ServerNames())
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("image takes no arguments, got %q (--server names the server)", pos)
	}
	if _, err := cluster.LookupServer(*server); err != nil {
		return badInput("--server: %v", err)
	}
	script, err := drivers.FindShipped("cluster/image/build.sh")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "bash", script, *server)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("building the %s image (%s): %w", *server, script, err)
	}
	return nil
}
