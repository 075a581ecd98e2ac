package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// cmdSweep measures a failure's unsafe window: the scenario with the knob
// at each value, once per seed, and the share of runs that broke the lock
// at each value, with each run's damage (store/sweep-SCENARIO-KNOB.md and
// .svg). A sweep measures; it passes or fails nothing, and exits 0 unless
// a run reached no verdict (2).
func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	var f runFlags
	f.register(fs, false)
	knobName := fs.String("knob", "", "the parameter to sweep (pause-ttl, down-after-ttl)")
	var values []float64
	fs.Func("values", "comma-separated values of the knob, in TTLs (e.g. 0.5,1,1.5,2)", func(s string) error {
		values = nil
		for _, v := range strings.Split(s, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || x <= 0 {
				return fmt.Errorf("want numbers above 0, got %q", v)
			}
			values = append(values, x)
		}
		return nil
	})
	var sr seededRuns
	sr.register(fs)
	names, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(names) != 1 {
		return badInput("sweep takes one scenario, got %d", len(names))
	}
	if *knobName == "" || len(values) == 0 {
		return badInput("sweep needs --knob and --values")
	}
	if f.target != "" {
		return badInput("--target: a sweep changes the deployment's settings (Sentinel's down-after) and strikes nodes; run it on deadbolt's own containers")
	}
	knob, err := scenarios.KnobNamed(*knobName)
	if err != nil {
		return badInput("%v", err)
	}
	base, err := scenarios.Get(names[0])
	if err != nil {
		return badInput("%v", err)
	}
	o := f.options(ctx, stderr)
	if err := f.probe(&o); err != nil {
		return err
	}
	sw := reports.Sweep{Scenario: base.Name, Knob: knob.Name, What: knob.What, Command: "deadbolt " + strings.Join(append([]string{"sweep"}, args...), " ")}
	for k := range sr.seeds {
		sw.Seeds = append(sw.Seeds, o.Seed+uint64(k))
	}
	var runs []scenarios.Scenario
	var runSeeds []uint64
	var point []int
	for i, v := range values {
		sc, err := knob.At(base, v)
		if err == nil {
			_, err = sc.Prepare(o)
		}
		if err != nil {
			return badInput("%v", err)
		}
		sw.Points = append(sw.Points, reports.SweepPoint{Value: v})
		for _, seed := range sw.Seeds {
			runs, runSeeds, point = append(runs, sc), append(runSeeds, seed), append(point, i)
		}
	}
	if err := f.checkServer(ctx); err != nil {
		return err
	}
	if err := checkStore(f.store); err != nil {
		return err
	}
	closePool, err := sr.pool(ctx, runs, &o)
	if err != nil {
		return err
	}
	defer closePool()
	fmt.Fprintf(stderr, "sweep: %s, %s at %s, %s each: %s, %d at a time\n", base.Name, knob.Name,
		checker.Plural(len(values), "value"), checker.Plural(sr.seeds, "seed"), checker.Plural(len(runs), "run"), sr.parallel)
	st := newStatus(stderr)
	st.attach(&o)
	sw.Started = time.Now()
	results, errs := runSeeded(ctx, runs, runSeeds, sr.parallel, o)
	st.close()
	sw.Took = time.Since(sw.Started)
	if ctx.Err() != nil {
		return scenarios.ErrInterrupted
	}
	code := exitOK
	for i := range runs {
		p := &sw.Points[point[i]]
		if errs[i] != nil {
			p.Errors = append(p.Errors, fmt.Sprintf("seed %d: %v", runSeeds[i], errs[i]))
			code = exitUnknown
			continue
		}
		p.Runs = append(p.Runs, results[i])
	}
	md, svg, err := reports.WriteSweep(f.store, sw)
	if err != nil {
		return err
	}
	reports.SweepMarkdown(stdout, sw, svg)
	fmt.Fprintf(stdout, "\nthe sweep: %s and %s\n", md, svg)
	if code != exitOK {
		return exitError{code}
	}
	return nil
}
