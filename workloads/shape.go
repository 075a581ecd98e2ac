package workloads

// Shape is what a run's clients do, as a scenario writes it: how many run
// at once, on which keys, with what lease time, working how long under
// the lock and pausing how long between attempts. Scenario embeds it and
// Config carries it, so a knob of the workload is one field here.
type Shape struct {
	// Clients is how many clients run at once.
	Clients int `json:"clients"`
	// Keys are the lock keys (workloads that lock per user make their own).
	Keys []string `json:"keys,omitempty"`
	TTL  Duration `json:"ttl"`
	// HoldMin and HoldMax bound the work done under the lock; Pause is the
	// longest wait between a client's attempts.
	HoldMin Duration `json:"hold_min"`
	HoldMax Duration `json:"hold_max"`
	Pause   Duration `json:"pause"`
}
