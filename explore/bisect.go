package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// BisectOptions are one bisection's: a scenario file run on a library at
// each of its versions.
type BisectOptions struct {
	// File is the scenario file, Scenario what it says.
	File     string
	Scenario scenarios.Scenario
	// Library is the library's name (redsync), Versions its versions to
	// run, oldest first (SortVersions).
	Library  string
	Versions []string
	// Seeds are the seeds every version runs with.
	Seeds    []uint64
	Parallel int
	// Dir is where the runs and bisect.json, bisect.md go.
	Dir string
	// Run is what every run takes (its log, the overrides).
	Run scenarios.RunOptions
}

// Bisection is bisect.json: what each version gave, the first version the
// scenario breaks and the first after it that it no longer does.
type Bisection struct {
	File     string          `json:"file"`
	Library  string          `json:"library"`
	Versions []VersionResult `json:"versions"`
	// FirstAffected is the oldest version the scenario broke; FirstFixed
	// the oldest after it that no seed broke ("" when none).
	FirstAffected string `json:"first_affected,omitempty"`
	FirstFixed    string `json:"first_fixed,omitempty"`
	// Again are versions after FirstFixed that broke again (a regression).
	Again     []string `json:"again,omitempty"`
	DurationS float64  `json:"duration_s"`
	Dir       string   `json:"dir"`
}

// VersionResult is one version's runs.
type VersionResult struct {
	Version string `json:"version"`
	Lock    string `json:"lock"`
	// Verdict is "affected" (some seed broke the lock), "unaffected" (every
	// seed valid) or "unknown" (no seed broke it, and some reached no
	// verdict).
	Verdict string `json:"verdict"`
	Runs    []Run  `json:"runs"`
}

// SortVersions orders versions oldest first, as semantic versions (a
// leading v added where missing: Debian's 6.1.0).
func SortVersions(vs []string) []string {
	out := slices.Clone(vs)
	sv := func(v string) string {
		if !strings.HasPrefix(v, "v") {
			v = "v" + v
		}
		return v
	}
	slices.SortStableFunc(out, func(a, b string) int { return semver.Compare(sv(a), sv(b)) })
	return slices.Compact(out)
}

// Bisect runs the file on every version with every seed, o.Parallel runs
// at once, and names the first affected and the first fixed version.
func Bisect(ctx context.Context, o BisectOptions) (*Bisection, error) {
	if len(o.Versions) == 0 || len(o.Seeds) == 0 {
		return nil, fmt.Errorf("bisect needs versions and seeds")
	}
	started := time.Now()
	x := &explorer{o: Options{Dir: o.Dir, Run: o.Run, Parallel: max(o.Parallel, 1)}}
	b := &Bisection{File: o.File, Library: o.Library, Dir: o.Dir}
	var jobs []job
	var specs []cluster.Spec
	for _, v := range o.Versions {
		lock := o.Library + "@" + v
		b.Versions = append(b.Versions, VersionResult{Version: v, Lock: lock})
		for _, seed := range o.Seeds {
			jobs = append(jobs, job{scenario: len(b.Versions) - 1, s: o.Scenario, lock: lock, seed: seed})
		}
		s := o.Scenario
		s.Lock = lock
		if spec, err := s.ClusterSpec(x.runOptions(lock, 0)); err == nil {
			specs = append(specs, spec)
		}
	}
	x.pool = cluster.NewPool(specs)
	defer x.pool.Close(context.WithoutCancel(ctx))
	runs := x.runJobs(ctx, jobs, func(done, total int, j job, r Run) {
		x.o.logf("bisect: %d/%d runs: %s seed %d: %s", done, total, j.lock, j.seed, r.Verdict)
	})
	if ctx.Err() != nil {
		return nil, scenarios.ErrInterrupted
	}
	for k, r := range runs {
		vr := &b.Versions[jobs[k].scenario]
		vr.Runs = append(vr.Runs, r)
	}
	for i := range b.Versions {
		b.Versions[i].Verdict = versionVerdict(b.Versions[i].Runs)
	}
	b.FirstAffected, b.FirstFixed, b.Again = firstAffected(b.Versions)
	b.DurationS = time.Since(started).Seconds()
	return b, writeBisection(b)
}

// versionVerdict: affected when some run broke the lock, unaffected when
// every run was valid, unknown otherwise.
func versionVerdict(runs []Run) string {
	valid := 0
	for _, r := range runs {
		switch r.Verdict {
		case "invalid":
			return "affected"
		case "valid":
			valid++
		}
	}
	if valid == len(runs) && valid > 0 {
		return "unaffected"
	}
	return "unknown"
}

// firstAffected reads the versions oldest first: the first affected one,
// the first unaffected one after it, and any affected again after that.
func firstAffected(vs []VersionResult) (affected, fixed string, again []string) {
	for _, v := range vs {
		switch {
		case affected == "" && v.Verdict == "affected":
			affected = v.Version
		case affected != "" && fixed == "" && v.Verdict == "unaffected":
			fixed = v.Version
		case fixed != "" && v.Verdict == "affected":
			again = append(again, v.Version)
		}
	}
	return affected, fixed, again
}

// BisectSummary says in a line what the bisection found. A break in the
// oldest version tried says nothing of older ones, and the line says so.
func BisectSummary(b *Bisection) string {
	var s string
	switch {
	case b.FirstAffected == "":
		s = fmt.Sprintf("%s: no version of %s broke", b.Library, checker.Plural(len(b.Versions), "version"))
	case b.FirstAffected == b.Versions[0].Version:
		s = fmt.Sprintf("%s: affected from the oldest version tried (%s)", b.Library, b.FirstAffected)
	default:
		s = fmt.Sprintf("%s: first affected %s", b.Library, b.FirstAffected)
	}
	switch {
	case b.FirstAffected == "":
	case b.FirstFixed == "":
		s += "; no later version tried is fixed"
	default:
		s += ", first fixed " + b.FirstFixed
	}
	if len(b.Again) > 0 {
		s += fmt.Sprintf("; broken again in %s", strings.Join(b.Again, ", "))
	}
	if b.FirstAffected != "" {
		s += fmt.Sprintf(" (%s tried)", checker.Plural(len(b.Versions), "version"))
	}
	return s
}

// writeBisection writes bisect.json and bisect.md.
func writeBisection(b *Bisection) error {
	j, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.Dir, "bisect.json"), append(j, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# deadbolt bisect: %s\n\n%s.\n\nScenario file: `%s`\n\n| version | verdict | runs |\n|---|---|---|\n", b.Library, BisectSummary(b), b.File)
	for _, v := range b.Versions {
		var runs []string
		for _, r := range v.Runs {
			runs = append(runs, fmt.Sprintf("seed %d %s (%s)", r.Seed, r.Verdict, r.Dir))
		}
		fmt.Fprintf(&md, "| %s | %s | %s |\n", v.Version, v.Verdict, strings.Join(runs, "; "))
	}
	return os.WriteFile(filepath.Join(b.Dir, "bisect.md"), []byte(md.String()), 0o644)
}
