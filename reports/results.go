// Package reports turns checker results into the files a run leaves behind
// (results.json, report.md, the model checker's HTML view, report.html with
// its timeline and plots), the store's index.html, the JUnit file of a
// suite, the live progress line, and the tables that compare runs.
package reports

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// Results is results.json: what ran, what was expected, what was found.
type Results struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description"`
	// Precondition is what had to hold when the decisive fault struck.
	Precondition string `json:"precondition,omitempty"`
	Seed         uint64 `json:"seed"`
	Lock         string `json:"lock"`
	// Mix are the locks some clients ran instead (LOCK:CLIENTS, ...).
	Mix string `json:"mix,omitempty"`
	// MixedProcesses are the history processes that ran a mixed lock, and
	// which.
	MixedProcesses map[int]string `json:"mixed_processes,omitempty"`
	// Reentrant: the lock declared re-entry, and the checks judged a
	// client's leases of one key as one hold.
	Reentrant bool `json:"reentrant,omitempty"`
	// Driver is the command line that ran the clients when it was not
	// deadbolt's own (`--driver`).
	Driver string `json:"driver,omitempty"`
	// LockClient is the client library the lock sent its commands with, as
	// the lock declared it ("go-redis v9.23.0"); LockSettings are its
	// knobs whose values differ from the library's defaults ("name=value"),
	// none when it ran as the library's README builds it. LockKnobs: the
	// lock takes knobs at all (a library's lock), so "defaults" means
	// something.
	LockClient   string   `json:"lock_client,omitempty"`
	LockSettings []string `json:"lock_settings,omitempty"`
	LockKnobs    bool     `json:"lock_knobs,omitempty"`
	// Rerun is the arguments of the single `deadbolt run` that runs this
	// run again: its scenario (or --file), its seed, and every option it
	// was given but where it wrote (--store) and how a suite spread its
	// runs (--parallel, --shard, --junit). RerunCommand(r) is its command line.
	Rerun []string `json:"rerun,omitempty"`
	// Server is what ran the lock service: the --server name and image,
	// and the version its node reported.
	Server   Server  `json:"server"`
	Topology string  `json:"topology"`
	Workload string  `json:"workload"`
	Nemesis  string  `json:"nemesis"`
	Clients  int     `json:"clients"`
	TimeS    float64 `json:"time_s"`
	Expected string  `json:"expected"`
	Verdict  string  `json:"verdict"`
	// Staging is why the run did not stage what it set out to ("": it
	// did); an invalid verdict stands beside it (checker.Report.Staging).
	Staging string `json:"staging,omitempty"`
	// NotApplicable says, from the evidence, why the failure the run
	// staged cannot arise for its lock (checker.Report.NotApplicable).
	NotApplicable string `json:"not_applicable,omitempty"`
	Matches       bool   `json:"matches"`
	Reason        string `json:"reason"`
	// Checks are every checker's verdict, reason, metrics and evidence.
	Checks       []checker.Result      `json:"checks"`
	Anomalies    []checker.Anomaly     `json:"anomalies"`
	FaultWindows []checker.FaultWindow `json:"fault_windows"`
	Phases       []checker.PhaseSpan   `json:"phases,omitempty"`
	Observed     []checker.Observed    `json:"observed,omitempty"`
	Stats        checker.Stats         `json:"stats"`
	Ops          int                   `json:"ops"`
	DurationS    float64               `json:"duration_s"`
	// Health is "ok" when the healed cluster passed its final check.
	Health string `json:"health"`
	Dir    string `json:"dir"`
	// ClusterReused: the run had a cluster an earlier run of the suite
	// used, reset (cluster.Pool); ClusterFallback is why a kept cluster
	// could not be reset and a fresh one started instead.
	ClusterReused   bool   `json:"cluster_reused,omitempty"`
	ClusterFallback string `json:"cluster_fallback,omitempty"`
	// SetupS is how long getting the cluster took (a start or a reset);
	// WorkloadS the workload from its start through heal and settle.
	// DurationS minus WorkloadS is the run's overhead.
	SetupS    float64 `json:"setup_s,omitempty"`
	WorkloadS float64 `json:"workload_s,omitempty"`
}

// Server names the server a run's lock service ran: the known server's
// name (cluster.Servers; "" for an image of DEADBOLT_REDIS_IMAGE that is
// none of them, or a --target) and its image, and what its first node said
// in INFO server.
type Server struct {
	Name  string `json:"name,omitempty"`
	Image string `json:"image,omitempty"`
	// Product is "redis" or "valkey" (server_name).
	Product string `json:"product,omitempty"`
	// Version is valkey_version on Valkey, redis_version on Redis;
	// RedisVersion is redis_version (7.2.4 on Valkey 8).
	Version      string `json:"version,omitempty"`
	RedisVersion string `json:"redis_version,omitempty"`
}

// String is "redis-8.0 (redis 8.0.2)", "valkey-8.1 (valkey 8.1.1,
// redis_version 7.2.4)", or as much of it as is known.
func (s Server) String() string {
	reported := ""
	if s.Version != "" {
		reported = s.Product + " " + s.Version
		if s.Product != "redis" && s.RedisVersion != "" {
			reported += ", redis_version " + s.RedisVersion
		}
	}
	name := s.Name
	if name == "" {
		name = s.Image
	}
	switch {
	case name == "":
		return reported
	case reported == "":
		return name
	}
	return name + " (" + reported + ")"
}

// Flag is " --server NAME" for a server other than the default one, ""
// otherwise: what a re-run's command line adds.
func (s Server) Flag() string {
	if s.Name == "" || s.Name == DefaultServer {
		return ""
	}
	return " --server " + s.Name
}

// DefaultServer is the server a run without --server runs (cluster.Servers'
// first; reports does not import cluster).
const DefaultServer = "redis-7.0"

// SetCheck copies a checker report in.
func (r *Results) SetCheck(c checker.Report, matches bool) {
	r.Verdict = string(c.Verdict)
	r.Staging = c.Staging
	r.NotApplicable = c.NotApplicable
	r.Matches = matches
	r.Reason = c.Reason
	r.Checks = c.Checks
	r.Anomalies = c.Anomalies
	r.FaultWindows = c.FaultWindows
	r.Phases = c.Phases
	r.Observed = c.Observed
	r.Stats = c.Stats
}

// Unjudged: nobody has judged the lock under this failure yet (the
// scenario expected "unknown"), so the run reports its verdict and neither
// passes nor fails.
func (r *Results) Unjudged() bool { return r.Expected == "unknown" }

// Undecided: the run gives no answer to its expectation: its verdict is
// unknown, or it broke the lock though the planned strike did not land (a
// violation, and no answer to what the scenario claims of this staging:
// no reproduction of an unsafe scenario, and no contradiction of a safe
// one, which claims safety under the fault it stages). An unjudged run
// whose verdict is unknown is undecided too: it says nothing of the lock.
func (r *Results) Undecided() bool {
	if r.NotApplicable != "" {
		return false
	}
	if r.Unjudged() {
		return r.Verdict == "unknown"
	}
	return !r.Matches && (r.Verdict == "unknown" || (r.Verdict == "invalid" && r.Staging != ""))
}

// Contradicts: the verdict says the opposite of the expectation: valid
// where it was unsafe, or broken as staged where it was safe.
func (r *Results) Contradicts() bool {
	if r.Unjudged() || r.Matches {
		return false
	}
	return r.Verdict == "valid" || (r.Verdict == "invalid" && r.Staging == "")
}

// Outcome is PASS, FAIL, or UNJUDGED when there was nothing to match.
func (r *Results) Outcome() string {
	switch {
	case r.Unjudged():
		return "UNJUDGED"
	case r.Matches:
		return "PASS"
	}
	return "FAIL"
}

// outcomeWords says how the verdict stands to the expectation, in a sentence.
func outcomeWords(r *Results) string {
	switch {
	case r.Unjudged():
		return "the result is not judged: nobody has judged this lock under this failure yet (see scenarios/known.json), so the verdict is reported as found"
	case r.Matches:
		return "the result matches the expectation"
	}
	return "the result does NOT match the expectation"
}

// Metric sums a metric over the checks that report it.
func (r *Results) Metric(name string) int64 {
	var n int64
	for _, c := range r.Checks {
		n += c.Metrics[name]
	}
	return n
}

// CheckVerdict is the named check's verdict, "-" when it did not run or had
// nothing to judge.
func (r *Results) CheckVerdict(name string) string {
	for _, c := range r.Checks {
		if c.Checker == name && c.Applicable {
			return string(c.Verdict)
		}
	}
	return "-"
}

// ReadResults reads a results.json.
func ReadResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a results file: %w", path, err)
	}
	return &r, nil
}

// LockText names the lock, with the driver that ran it when it was not
// deadbolt's own, and says when its re-entries were judged as one hold.
func LockText(r *Results) string {
	s := r.Lock
	if r.Mix != "" {
		s += " beside " + r.Mix + " (lock:clients, the last client slots)"
		var ps []string
		for _, p := range slices.Sorted(maps.Keys(r.MixedProcesses)) {
			ps = append(ps, fmt.Sprintf("process %d ran %s", p, r.MixedProcesses[p]))
		}
		if len(ps) > 0 {
			s += ": " + strings.Join(ps, ", ")
		}
	}
	if r.Driver != "" {
		s += " (driver: " + r.Driver + ")"
	}
	if t := SettingsText(r.LockKnobs, r.LockSettings); t != "" {
		s += ", " + t
	}
	if r.LockClient != "" {
		s += ", over " + r.LockClient
	}
	if r.Reentrant {
		s += ", reentrant: a client's holds of a key judged as one"
	}
	return s
}

// SettingsText says how a library's lock was set up: at its defaults, or
// which knobs differed from them; "" for a lock that takes no knobs.
func SettingsText(knobs bool, settings []string) string {
	switch {
	case len(settings) > 0:
		return "set: " + strings.Join(settings, " ")
	case knobs:
		return "the library's defaults"
	}
	return ""
}
