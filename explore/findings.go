package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// Shrunk is what shrinking a finding found.
type Shrunk struct {
	// Confirmed: the scenario as generated, or made stronger (Amplified),
	// broke the lock on every seed (and left the second lock unbroken); an
	// unconfirmed finding is not shrunk, and its file is the generated one.
	Confirmed bool `json:"confirmed"`
	// Seeds are the seeds each candidate ran with, the finding's run's
	// first.
	Seeds []uint64 `json:"seeds"`
	// Replays say what the kept file gave on those seeds, by lock:
	// "invalid 3/3", "valid 3/3".
	Replays map[string]string `json:"replays"`
	// Amplified says how the scenario was made stronger before it broke
	// the lock on every seed ("": it did as generated); amplify.go.
	Amplified string `json:"amplified,omitempty"`
	// Runs is how many runs the shrink took, the confirmation's included.
	Runs int `json:"runs"`
	// Trials are the candidates run, in order.
	Trials []Trial `json:"trials"`
	// From is the generated file.
	From string `json:"from"`
}

// Trial is one candidate the shrink ran.
type Trial struct {
	Change string `json:"change"`
	Kept   bool   `json:"kept"`
	Runs   int    `json:"runs"`
	// Verdicts are the candidate's, by lock and seed.
	Verdicts map[string][]string `json:"verdicts"`
}

// shrinkFindings confirms and shrinks the first o.Shrink findings, then
// writes each one's file and draft write-up into findings/.
func (x *explorer) shrinkFindings(ctx context.Context, gens []Generated, rep *Report) error {
	dir := filepath.Join(x.o.Dir, "findings")
	shrunk, tried := 0, 0
	for _, i := range lockFirst(rep) {
		f := &rep.Findings[i]
		// The first Shrink findings that break the lock on every seed are
		// shrunk; one that does not is passed over for the next (at most
		// three tries a shrink), its confirmation's runs shown. Those that
		// break the lock explored come before those that break --against.
		if shrunk < x.o.Shrink && tried < 3*x.o.Shrink {
			tried++
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			sh, best, runs := x.shrink(ctx, f, gens[f.Scenario])
			if ctx.Err() != nil {
				return scenarios.ErrInterrupted
			}
			f.Shrink = sh
			if sh.Confirmed {
				shrunk++
				name := fmt.Sprintf("%s-%s", gens[f.Scenario].Scenario.Name, FileSafe(f.Lock))
				best.Name = name
				best.Description = fmt.Sprintf("shrunk by deadbolt explore from %s (%s): breaks %s on %d of %d seeds%s. Drawn as: %s",
					sh.From, checker.Plural(sh.Runs, "run"), f.Lock, len(sh.Seeds), len(sh.Seeds), againstWords(f.Against), gens[f.Scenario].Scenario.Description)
				best.Expect = scenarios.Unknown
				path := filepath.Join(dir, name+".json")
				if err := writeScenario(path, best, sh.Seeds[0]); err != nil {
					return err
				}
				f.File = path
				f.Replay = x.replay(f.File, f.Lock, sh.Seeds[0])
				f.Writeup = filepath.Join(dir, name+".md")
				if err := os.WriteFile(f.Writeup, []byte(writeup(rep, f, best, runs)), 0o644); err != nil {
					return err
				}
			}
		}
		if !filepath.IsAbs(f.File) && !strings.HasPrefix(f.File, x.o.Dir) {
			f.File = filepath.Join(x.o.Dir, f.File)
		}
		seed := rep.Scenarios[f.Scenario].Seed
		if f.Shrink != nil && len(f.Shrink.Seeds) > 0 {
			seed = f.Shrink.Seeds[0]
		}
		f.Replay = x.replay(f.File, f.Lock, seed)
	}
	return nil
}

// lockFirst are the findings' indices, those that break rep.Lock first
// (what was asked of the exploration), then those that break the second
// lock, each in the order found.
func lockFirst(rep *Report) []int {
	var first, then []int
	for i, f := range rep.Findings {
		if f.Lock == rep.Lock {
			first = append(first, i)
		} else {
			then = append(then, i)
		}
	}
	return append(first, then...)
}

func againstWords(against string) string {
	if against == "" {
		return ""
	}
	return ", and leaves " + against + " unbroken on each"
}

// FileSafe is a lock's name as part of a file name.
func FileSafe(lock string) string {
	return strings.NewReplacer("@", "-", "/", "-", " {", "-", "}", "", " ", "-", "=", "-").Replace(lock)
}

// replay is the command line that runs file with lock and seed, with the
// driver the exploration's runs of lock took.
func (x *explorer) replay(file, lock string, seed uint64) string {
	name, knobs := sideOf(lock)
	args := []string{"deadbolt", "run", "--file", file, "--lock", name, "--seed", fmt.Sprint(seed)}
	for _, k := range slices.Sorted(maps.Keys(knobs)) {
		args = append(args, "--lock-option", k+"="+knobs[k])
	}
	if o := x.runOptions(lock, seed); o.Driver.Path != "" && x.o.Run.Locks != nil {
		args = append(args, "--driver", o.Driver.String())
	}
	var quoted []string
	for _, a := range args {
		quoted = append(quoted, reports.ShellQuote(a))
	}
	return strings.Join(quoted, " ")
}

// trialSeeds are the seeds a candidate runs with: the finding's run's,
// then others drawn from the exploration's seed.
func trialSeeds(seed uint64, index int, first uint64, n int) []uint64 {
	out := []uint64{first}
	for k := 1; len(out) < n; k++ {
		s := uint64(newDrawer(seed, index, fmt.Sprintf("trial seed %d", k)).intIn(1, 999_999))
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// shrink confirms that f's scenario breaks f.Lock on every trial seed (and
// leaves f.Against unbroken), then tries simpler candidates within the
// budget, keeping each that still does. It returns what it found, the
// smallest scenario, and the runs of the last candidate kept.
func (x *explorer) shrink(ctx context.Context, f *Finding, g Generated) (*Shrunk, scenarios.Scenario, []Run) {
	sh := &Shrunk{Seeds: trialSeeds(x.o.Seed, g.Index, g.Seed, x.o.seeds()), From: filepath.Join(x.o.Dir, "scenarios", g.Scenario.Name+".json")}
	if x.o.Runs == 0 {
		sh.From = "" // not an exploration's: the caller says where it came from
	}
	s := g.Scenario
	s.Lock = f.Lock
	ok, runs := x.breaks(ctx, s, f, sh)
	sh.Trials = append(sh.Trials, trialOf("the scenario as generated", ok, runs))
	for _, a := range Amplified(s) {
		if ok || ctx.Err() != nil || x.o.ShrinkRuns-sh.Runs < x.trialCost(f) {
			break
		}
		if !x.runnable(a.Scenario, f) {
			continue
		}
		ok, runs = x.breaks(ctx, a.Scenario, f, sh)
		sh.Trials = append(sh.Trials, trialOf(a.Change, ok, runs))
		x.o.logf("explore: run %d broke %s on some seeds only; %s: %s", g.Index, f.Lock, a.Change, map[bool]string{true: "breaks it on each, kept", false: "does not"}[ok])
		if ok {
			s = a.Scenario
			sh.Amplified = a.Change
		}
	}
	sh.Confirmed = ok
	if !ok {
		sh.Replays = replays(runs)
		return sh, s, runs
	}
	best, kept := s, runs
	tried := map[string]bool{key(s): true}
	// A change that did not break the lock is not tried again while the
	// faults stay as they were (the same shorter fault on a scenario that
	// differs only in its holds); once a fault changed, it may.
	failed := map[string]bool{}
	x.o.logf("explore: shrinking run %d (%s on %s): confirmed on %d seeds", g.Index, f.Anomaly, f.Lock, len(sh.Seeds))
	for ctx.Err() == nil && x.o.ShrinkRuns-sh.Runs >= x.trialCost(f) {
		improved := false
		stream := Candidates(best)
		for v, more := stream(); more && ctx.Err() == nil && x.o.ShrinkRuns-sh.Runs >= x.trialCost(f); v, more = stream() {
			c := v.(scenarios.Scenario)
			k, change := key(c), changed(best, c)
			again := change + " " + key(scenarios.Scenario{Fault: c.Fault})
			if tried[k] || failed[again] || !x.runnable(c, f) {
				continue
			}
			tried[k] = true
			ok, runs := x.breaks(ctx, c, f, sh)
			sh.Trials = append(sh.Trials, trialOf(change, ok, runs))
			x.o.logf("explore: shrinking run %d: %s: %s", g.Index, change, map[bool]string{true: "still breaks it, kept", false: "no longer does"}[ok])
			if !ok {
				failed[again] = true
			}
			if ok {
				best, kept, improved = c, runs, true
				break
			}
		}
		if !improved {
			break
		}
	}
	sh.Replays = replays(kept)
	return sh, best, kept
}

// trialCost is the most runs one candidate takes.
func (x *explorer) trialCost(f *Finding) int {
	if f.Against == "" {
		return x.o.seeds()
	}
	return 2 * x.o.seeds()
}

// runnable reports that both locks of f can run candidate c.
func (x *explorer) runnable(c scenarios.Scenario, f *Finding) bool {
	if _, err := x.prepared(c, f.Lock); err != nil {
		return false
	}
	if f.Against != "" {
		if _, err := x.prepared(c, f.Against); err != nil {
			return false
		}
	}
	return true
}

// breaks runs c on f.Lock with the first seed, and only if that broke it,
// on the others and on f.Against with every seed, side by side: true when
// f.Lock broke on each and f.Against on none (valid each time).
func (x *explorer) breaks(ctx context.Context, c scenarios.Scenario, f *Finding, sh *Shrunk) (bool, []Run) {
	x.expect(c, f.Lock, len(sh.Seeds))
	if f.Against != "" {
		x.expect(c, f.Against, len(sh.Seeds))
	}
	first := x.runWith(ctx, c, f.Lock, sh.Seeds[0])
	sh.Runs++
	runs := []Run{first}
	if first.Verdict != "invalid" {
		return false, runs
	}
	var jobs []job
	for _, seed := range sh.Seeds[1:] {
		jobs = append(jobs, job{s: c, lock: f.Lock, seed: seed})
	}
	if f.Against != "" {
		for _, seed := range sh.Seeds {
			jobs = append(jobs, job{s: c, lock: f.Against, seed: seed})
		}
	}
	more := x.runJobs(ctx, jobs, nil)
	sh.Runs += len(more)
	runs = append(runs, more...)
	for _, r := range runs {
		want := "invalid"
		if r.Lock != f.Lock {
			want = "valid"
		}
		if r.Verdict != want {
			return false, runs
		}
	}
	return true, runs
}

// expect tells the pool of n runs of c on lock to come, so that their
// clusters are kept and reset between them, not removed and started anew.
func (x *explorer) expect(c scenarios.Scenario, lock string, n int) {
	c.Lock = lock
	if spec, err := c.ClusterSpec(x.runOptions(lock, 0)); err == nil {
		x.pool.Want(spec, n)
	}
}

func trialOf(change string, kept bool, runs []Run) Trial {
	t := Trial{Change: change, Kept: kept, Runs: len(runs), Verdicts: map[string][]string{}}
	for _, r := range runs {
		t.Verdicts[r.Lock] = append(t.Verdicts[r.Lock], r.Verdict)
	}
	return t
}

// replays say what each lock's runs gave: "invalid 3/3", or the mix.
func replays(runs []Run) map[string]string {
	by := map[string][]string{}
	for _, r := range runs {
		by[r.Lock] = append(by[r.Lock], r.Verdict)
	}
	out := map[string]string{}
	for lock, vs := range by {
		counts := map[string]int{}
		for _, v := range vs {
			counts[v]++
		}
		var parts []string
		for _, v := range slices.Sorted(maps.Keys(counts)) {
			parts = append(parts, fmt.Sprintf("%s %d/%d", v, counts[v], len(vs)))
		}
		out[lock] = strings.Join(parts, ", ")
	}
	return out
}

// key identifies a candidate, to run none twice.
func key(s scenarios.Scenario) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// changed says how c differs from s, field by field of their files.
func changed(s, c scenarios.Scenario) string {
	a, b := fields(s), fields(c)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(mergeAny(a, b))) {
		if k == "fault" {
			continue
		}
		if !jsonEqual(a[k], b[k]) {
			out = append(out, fmt.Sprintf("%s %s -> %s", k, compact(a[k]), compact(b[k])))
		}
	}
	sa, sb := s.Fault.Steps, c.Fault.Steps
	switch {
	case len(sa) != len(sb):
		out = append(out, fmt.Sprintf("%d steps -> %d", len(sa), len(sb)))
	default:
		for i := range sa {
			x, y := stepFields(sa[i]), stepFields(sb[i])
			for _, k := range slices.Sorted(maps.Keys(mergeAny(x, y))) {
				if !jsonEqual(x[k], y[k]) {
					out = append(out, fmt.Sprintf("step %d %s %s -> %s", i+1, k, compact(x[k]), compact(y[k])))
				}
			}
		}
	}
	if len(out) == 0 {
		return "no change"
	}
	return strings.Join(out, ", ")
}

func fields(s scenarios.Scenario) map[string]any {
	b, _ := scenarios.MarshalFile(s.Spec(), "checkers", "driver", "seed", "description", "scenario")
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func stepFields(st any) map[string]any {
	b, _ := json.Marshal(st)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func mergeAny(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, b)
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// compact is a field's value as JSON, durations of steps as Go writes them.
func compact(v any) string {
	if v == nil {
		return "none"
	}
	if f, ok := v.(float64); ok && f >= 1e6 {
		return fmt.Sprint(scaledNS(f))
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// scaledNS is a duration JSON wrote as nanoseconds.
func scaledNS(f float64) time.Duration { return time.Duration(f) }

// ShrinkOptions are a shrink's outside an exploration (`deadbolt shrink`):
// a scenario that broke Lock with Seed, and, with Against, left that lock
// unbroken.
type ShrinkOptions struct {
	Scenario      scenarios.Scenario
	Lock, Against string
	// Seed is the run's that broke the lock, the first of Seeds seeds.
	Seed  uint64
	Seeds int
	// Budget is the most runs, the confirmation's included.
	Budget   int
	Parallel int
	// Dir is where the trial runs go.
	Dir string
	Run scenarios.RunOptions
}

// Shrink confirms that o.Scenario breaks o.Lock on o.Seeds seeds (the
// run's and others drawn from it) and shrinks it as an exploration shrinks
// its findings: it returns what it found, the smallest scenario that still
// breaks the lock on every seed, and that scenario's runs.
func Shrink(ctx context.Context, o ShrinkOptions) (*Shrunk, scenarios.Scenario, []Run, error) {
	x := &explorer{o: Options{Lock: o.Lock, Against: o.Against, Seed: o.Seed, Seeds: o.Seeds, ShrinkRuns: o.Budget,
		Parallel: max(o.Parallel, 1), Dir: o.Dir, Run: o.Run}}
	x.pool = cluster.NewPool(nil)
	defer x.pool.Close(context.WithoutCancel(ctx))
	f := &Finding{Lock: o.Lock, Against: o.Against}
	sh, best, runs := x.shrink(ctx, f, Generated{Scenario: o.Scenario, Seed: o.Seed})
	if ctx.Err() != nil {
		return sh, best, runs, scenarios.ErrInterrupted
	}
	return sh, best, runs, nil
}
