package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Every failure's templates are registered scenarios, and a template's
// own lock is judged there.
func TestFailuresNameRegisteredTemplatesWithJudgedLocks(t *testing.T) {
	require.NotEmpty(t, Failures())
	for _, f := range Failures() {
		require.NotEmpty(t, f.Templates, f.Name)
		for _, name := range f.Templates {
			s, err := Get(name)
			require.NoError(t, err, f.Name)
			require.NotEqual(t, Unknown, Expected(name, s.Lock), "%s: %s's own lock is judged", f.Name, name)
		}
	}
}

// A failure names the faults its templates strike, by `deadbolt faults`'
// names; a failure named as a fault strikes that fault; and a fault's name
// where a failure's is expected says which failures strike it.
func TestFailuresNameTheFaultsTheyStrike(t *testing.T) {
	byName := map[string]Failure{}
	for _, f := range Failures() {
		byName[f.Name] = f
		for _, fault := range f.Faults {
			require.Contains(t, nemesis.Faults(), fault, f.Name)
		}
		if _, err := nemesis.FaultOf(f.Name); err == nil {
			require.Contains(t, f.Faults, f.Name, "failure %s is named as a fault it must strike", f.Name)
		}
	}
	require.Equal(t, []string{"isolate-primary", "kill"}, byName["failover"].Faults)
	require.Equal(t, []string{"link-cut"}, byName["partition"].Faults)
	require.Equal(t, []string{"link-delay"}, byName["reply-delay"].Faults)
	require.Empty(t, byName["nesting"].Faults)
	require.Contains(t, byName["partition"].Legend(), "(faults: link-cut)")
	require.Contains(t, byName["nesting"].Legend(), "no fault")

	_, err := Cells([]string{"simple"}, []string{"link-delay"}, RunOptions{})
	require.ErrorContains(t, err, `"link-delay" is a fault (deadbolt faults), not a failure: the failures that strike it are reply-delay`)
	_, err = Cells([]string{"simple"}, []string{"pause-node"}, RunOptions{})
	require.ErrorContains(t, err, "no failure strikes it")
	_, err = Cells([]string{"simple"}, []string{"paus"}, RunOptions{})
	require.ErrorContains(t, err, `unknown failure "paus"`)
}

// A lock's cell is the last template it can run in: a single-master lock
// takes the single-master template, RedLock the RedLock one; a lock no
// template fits has no scenario and says why; the expectation is the
// known table's, unknown where nobody judged the lock.
func TestCellsPickTheLastTemplateTheLockFits(t *testing.T) {
	o := RunOptions{Seed: 1}
	cells, err := Cells([]string{"simple", "redlock"}, []string{"failover", "restart", "reply-delay"}, o)
	require.NoError(t, err)
	require.Len(t, cells, 6)
	at := func(lock, failure string) MatrixCell {
		for _, c := range cells {
			if c.Lock == lock && c.Failure == failure {
				return c
			}
		}
		t.Fatalf("no cell %s x %s", lock, failure)
		return MatrixCell{}
	}
	require.Equal(t, "failover-simple", at("simple", "failover").Scenario.Name)
	require.Equal(t, Unsafe, at("simple", "failover").Scenario.Expect)
	require.Equal(t, "failover-redlock", at("redlock", "failover").Scenario.Name)
	require.Equal(t, "delay-bsm@simple", at("simple", "reply-delay").Scenario.Name)
	require.Equal(t, Expected("delay-bsm", "simple"), at("simple", "reply-delay").Scenario.Expect)
	require.Equal(t, "delay-redlock", at("redlock", "reply-delay").Scenario.Name)
	require.Equal(t, "restart-simple", at("simple", "restart").Scenario.Name)
	require.Equal(t, "restart-redlock", at("redlock", "restart").Scenario.Name)

	// With only the five-master restart, a single-master lock has no cell.
	only := []Failure{{Name: "restart", Templates: []string{"restart-redlock"}}}
	cells, err = cellsOf(only, []string{"simple"}, []string{"restart"}, o)
	require.NoError(t, err)
	require.Len(t, cells, 1)
	require.Empty(t, cells[0].Scenario.Name)
	require.Contains(t, cells[0].NotApplicable, "restart-redlock")
}

func TestCellsRefuseUnknownFailuresAndLocks(t *testing.T) {
	_, err := Cells([]string{"simple"}, []string{"meteor"}, RunOptions{})
	require.ErrorContains(t, err, `unknown failure "meteor"`)
	_, err = Cells([]string{"nolock"}, []string{"pause"}, RunOptions{})
	require.ErrorContains(t, err, "nolock")
}

// The matrix's rows are the locks that declare themselves the debate's,
// where they are registered, in the rows they declare: the nine of the
// Redlock debate, the argument read top down.
func TestTheDebatesLocksAreDeclaredByTheLocks(t *testing.T) {
	require.Equal(t, []string{"simple", "simple-wait", "reentrant", "fair", "multilock", "fenced", "redlock", "redsync", "bsm"}, DebateLocks())
}

// The debate's matrix: every lock of the debate has a cell under every
// failure (a single-master form or a RedLock form of each), but a lock
// family's own failure: nesting runs only the locks that declare re-entry,
// queue order only the locks that keep a queue, and the others' cells say
// so.
func TestTheDebatesMatrixCoversEveryLock(t *testing.T) {
	cells, err := Cells(DebateLocks(), FailureNames(), RunOptions{Seed: 1})
	require.NoError(t, err)
	family := map[string]struct {
		has func(string) bool
		why string
	}{
		"nesting":     {locks.Reentrant, "does not declare re-entry"},
		"queue-order": {locks.Queues, "keeps no queue of waiters"},
	}
	runs := map[string]int{}
	for _, c := range cells {
		f, own := family[c.Failure]
		switch {
		case c.Lock == "simple-wait" && c.Failure != "failover":
			// WAIT needs a replica; only the failover template has one.
			require.Contains(t, c.NotApplicable, "the independent topology's masters have none", "%s x %s", c.Lock, c.Failure)
		case own && !f.has(c.Lock):
			require.Contains(t, c.NotApplicable, f.why, "%s x %s", c.Lock, c.Failure)
		default:
			require.Empty(t, c.NotApplicable, "%s x %s", c.Lock, c.Failure)
			runs[c.Lock]++
		}
	}
	require.Equal(t, 2, runs["fair"]-runs["simple"], "fair nests and queues; simple does neither")
	require.Equal(t, 1, runs["reentrant"]-runs["simple"], "reentrant nests")
	require.Equal(t, len(FailureNames())-2, runs["redlock"])
}

// A lock that hands out fencing tokens guards the template's counter with
// the register that checks them; a mutex template, which has no resource,
// and any other lock keep the template's workload.
func TestAFencingLocksCellGuardsTheCounterWithItsTokens(t *testing.T) {
	pause, err := Get("pause-simple")
	require.NoError(t, err)
	require.Equal(t, "counter", pause.Workload)
	require.Equal(t, "fenced", Cell(pause, "fenced").Workload)
	require.Equal(t, "counter", Cell(pause, "redlock").Workload)
	failover, err := Get("failover-simple")
	require.NoError(t, err)
	require.Equal(t, failover.Workload, Cell(failover, "fenced").Workload)
}

// A servers axis puts each lock's row once on each server, side by side;
// every applicable cell runs on its server's image, the run names say the
// server (JUnit cases stay distinct), and an n/a cell stays n/a.
func TestOnServersRunsEachRowOnEveryServer(t *testing.T) {
	o := RunOptions{Seed: 1}
	only := []Failure{{Name: "restart", Templates: []string{"restart-redlock"}}}
	cells, err := cellsOf(only, []string{"simple", "redlock"}, []string{"restart"}, o)
	require.NoError(t, err)
	on, err := OnServers(cells, []string{"redis-7.0", "valkey-8.1"})
	require.NoError(t, err)
	require.Equal(t, []string{"simple on redis-7.0", "simple on valkey-8.1", "redlock on redis-7.0", "redlock on valkey-8.1"}, Rows(on))
	for _, c := range on {
		img, err := cluster.ServerImage(c.Server)
		require.NoError(t, err)
		if c.Lock == "simple" {
			require.NotEmpty(t, c.NotApplicable, "a single-master lock has no five-master restart, on any server")
			continue
		}
		require.Equal(t, img, c.Scenario.Cluster.Image, c.Row())
	}
	runs := MatrixRuns(on, []uint64{7})
	require.Len(t, runs, 2)
	require.Equal(t, "restart-redlock seed 7 on redis-7.0", runs[0].Name())
	require.Equal(t, "restart-redlock seed 7 on valkey-8.1", runs[1].Name())
	require.Equal(t, "deadbolt/valkey:8.1", runs[1].Scenario.Cluster.Image)

	_, err = OnServers(cells, []string{"keydb"})
	require.ErrorContains(t, err, `unknown server "keydb"`)
}
