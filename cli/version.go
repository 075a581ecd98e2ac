package cli

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// cmdVersion is version (and --version): deadbolt's version, the commit it
// was built from and the Go that built it, one line on stdout.
func cmdVersion(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("version takes no arguments, got %q", pos)
	}
	bi, ok := debug.ReadBuildInfo()
	_, err = fmt.Fprintln(stdout, versionLine(bi, ok))
	return err
}

// versionLine is "deadbolt VERSION [vcs.revision=R] [vcs.modified=M] GO":
// the main module's version ("(devel)" when built from a checkout, or
// when there is no build information), the VCS settings go build stamped,
// when it did, and the Go version.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	version, goVersion := "(devel)", runtime.Version()
	var vcs []string
	if ok && bi != nil {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, key := range []string{"vcs.revision", "vcs.modified"} {
			for _, s := range bi.Settings {
				if s.Key == key {
					vcs = append(vcs, key+"="+s.Value)
				}
			}
		}
	}
	return strings.Join(append(append([]string{"deadbolt", version}, vcs...), goVersion), " ")
}
