package scenarios

import (
	_ "embed"
	"fmt"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// The known-results table (known.json): for a failure, named by the
// scenario that stages it (its template), and a lock, what a run must find.
// A lock the table does not list under a failure is Unknown: nobody has
// judged it there, so its run reports a verdict and neither passes nor
// fails. The expectation belongs to the lock and the failure together:
// a scenario file without "expect" takes the table's for its own name and
// lock, and the matrix (Cell) takes it for any lock.
//
//go:embed known.json
var knownJSON []byte

var known = mustKnown(knownJSON)

func mustKnown(b []byte) map[string]map[string]Expectation {
	var k map[string]map[string]Expectation
	if err := decodeStrict(b, &k); err != nil {
		panic(fmt.Sprintf("scenarios: known.json: %v", err))
	}
	for failure, byLock := range k {
		for lock, e := range byLock {
			if e != Safe && e != Unsafe {
				panic(fmt.Sprintf("scenarios: known.json: %s.%s: want %s or %s (leave a lock out when nobody judged it), got %q", failure, lock, Safe, Unsafe, e))
			}
		}
	}
	return k
}

// Expected is what the table knows of lock under the failure template
// stages: Safe, Unsafe, or Unknown when nobody has judged it.
func Expected(template, lock string) Expectation {
	if e, ok := known[template][lock]; ok {
		return e
	}
	return Unknown
}

// Cell is one cell of the lock x failure matrix: template's failure
// (topology, workload, nemesis plan, shape) with lock in place of its own,
// named template@lock, expecting what the table knows. Its clients are
// deadbolt's own (a template's shipped driver runs only its own lock), and
// the template's Sentinel mode is left for the lock's default. Prepare
// judges whether the lock can run there; Spec is the cell's file.
func Cell(template Scenario, lock string) Scenario {
	if lock == template.Lock {
		return template
	}
	c := template
	c.Name = template.Name + "@" + lock
	c.Description = fmt.Sprintf("%s [lock %s in place of %s]", template.Description, lock, template.Lock)
	c.Lock, c.Expect, c.CI, c.Driver = lock, Expected(template.Name, lock), false, ""
	c.LockOptions.Sentinel = ""
	if takesKnobs(lock) && !takesKnobs(template.Lock) {
		// A library runs as its users run it: the options the template
		// gives deadbolt's own lock (a call timeout, a wait) are not its.
		c.LockOptions = client.LockOptions{}
	}
	if k, err := workloads.Get(c.Workload); err == nil && k.FencedAs != "" && locks.Fencing(lock) {
		// A lock that hands out fencing tokens guards the resource with the
		// workload that checks them (the counter's register that refuses a
		// stale token), so that the matrix shows Kleppmann's remedy in
		// place, not a token nobody reads (apply does the same for a
		// driver's lock that declares fencing).
		c.Workload = k.FencedAs
	}
	return c
}

// takesKnobs reports a lock that runs a library as its users run it: a
// library at a version, or one deadbolt's own client runs that declares
// its library's knobs (redsync, bsm, rueidis).
func takesKnobs(lock string) bool {
	return drivers.IsVersioned(lock) || len(locks.KnobsOf(lock)) > 0
}
