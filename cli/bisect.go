package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/explore"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// cmdBisect is `deadbolt bisect FILE --lock LIB --versions V1,V2,...` (or
// LO..HI): the scenario file run on the library at each version, with
// each seed, naming the first version it breaks and the first after that
// it no longer does. It exits 1 when some version broke, 0 when none did,
// 2 when no version broke and some reached no verdict.
func cmdBisect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bisect", flag.ContinueOnError)
	var f runFlags
	f.register(fs, false)
	lib := fs.String("lock", "", "the library, by name (see: deadbolt locks; its versions come from --versions)")
	versions := fs.String("versions", "", "the versions: V1,V2,... or LO..HI (every version between, both included, that the module proxy lists or deadbolt knows to build)")
	seeds, parallel := 3, 4
	fs.Func("seeds", fmt.Sprintf("runs per version, seeds --seed, --seed+1, ... (1-%d, default 3)", maxSeeds), bounded(&seeds, 1, maxSeeds))
	fs.Func("parallel", fmt.Sprintf("how many runs at once (1-%d, default 4)", maxParallel), bounded(&parallel, 1, maxParallel))
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return badInput("bisect takes one scenario file, got %d arguments", len(pos))
	case *lib == "":
		return badInput("bisect needs --lock LIBRARY (see: deadbolt locks)")
	case drivers.IsVersioned(*lib):
		return badInput("--lock %s: name the library alone (its versions come from --versions)", *lib)
	case *versions == "":
		return badInput("bisect needs --versions V1,V2,... or LO..HI")
	case f.target != "" || f.driver != "":
		return badInput("bisect builds each version's own driver on deadbolt's containers: --target and --driver do not apply")
	}
	l, err := drivers.GetLibrary(*lib)
	if err != nil {
		return badInput("--lock: %v", err)
	}
	vs, err := versionList(ctx, l, *versions)
	if err != nil {
		return badInput("--versions: %v", err)
	}
	file, err := scenarios.ReadFile(pos[0])
	if err != nil {
		return badInput("%v", err)
	}
	if file.Target || file.Driver != nil {
		return badInput("%s: bisect runs a scenario on deadbolt's own containers with each version's driver: the file's target or driver command does not apply", pos[0])
	}
	o := f.options(ctx, stderr)
	bo := explore.BisectOptions{File: pos[0], Scenario: file.Scenario, Library: l.Name, Versions: explore.SortVersions(vs), Parallel: parallel, Run: o}
	for k := range seeds {
		bo.Seeds = append(bo.Seeds, o.Seed+uint64(k))
	}
	// Every version's driver is built (or found) and its hello read, and
	// the scenario prepared with it, before any container starts.
	for _, v := range bo.Versions {
		s := file.Scenario
		s.Lock = l.Name + "@" + v
		if _, err := s.Prepare(o); err != nil {
			return badInput("%s at %s: %v", l.Name, v, err)
		}
	}
	if err := f.checkServer(ctx); err != nil {
		return err
	}
	if err := checkStore(f.store); err != nil {
		return err
	}
	bo.Dir = filepath.Join(f.store, "bisect", fmt.Sprintf("%s-%s", l.Name, time.Now().UTC().Format("20060102T150405Z")))
	if err := os.MkdirAll(bo.Dir, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bisect: %s on %s %s, seeds %v; runs in %s\n", pos[0], l.Name, strings.Join(bo.Versions, ", "), bo.Seeds, bo.Dir)
	b, err := explore.Bisect(ctx, bo)
	if ctx.Err() != nil {
		return scenarios.ErrInterrupted
	}
	if err != nil {
		return err
	}
	for _, v := range b.Versions {
		var vs []string
		for _, r := range v.Runs {
			vs = append(vs, r.Verdict)
		}
		fmt.Fprintf(stdout, "%-12s %-10s %s\n", v.Version, v.Verdict, strings.Join(vs, " "))
	}
	fmt.Fprintf(stdout, "\n%s.\nreport: %s\n", explore.BisectSummary(b), filepath.Join(b.Dir, "bisect.md"))
	switch {
	case b.FirstAffected != "":
		return exitError{exitContradicts}
	}
	for _, v := range b.Versions {
		if v.Verdict == "unknown" {
			return exitError{exitUnknown}
		}
	}
	return nil
}

// versionList reads --versions: a list, or LO..HI.
func versionList(ctx context.Context, l drivers.Library, s string) ([]string, error) {
	if lo, hi, ok := strings.Cut(s, ".."); ok {
		vs, err := l.VersionsBetween(ctx, lo, hi)
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			return nil, fmt.Errorf("no version of %s between %s and %s is listed or known", l.Name, lo, hi)
		}
		return vs, nil
	}
	var vs []string
	if err := nameList("version", &vs)(s); err != nil {
		return nil, err
	}
	return vs, nil
}
