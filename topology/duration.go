package topology

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a length of time in a spec (a Spec's down-after, a
// workload's shape, a scenario's), written in JSON as a Go duration string
// ("1.5s") so that files and scenario.json read as people write them: the
// one duration type a scenario file holds.
type Duration time.Duration

// D is the duration as the time package takes it.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a Go duration string. A number is refused: it would
// not say its unit (the old *_ms fields, which did, and a cluster's old
// DownAfter in nanoseconds are read by scenarios' upgradeLegacy).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a Go duration such as \"1.5s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q (a Go duration such as \"1.5s\")", s)
	}
	*d = Duration(v)
	return nil
}
