package topology

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a length of time in a spec (a workload's shape, a
// scenario's), written in JSON as a Go duration string ("1.5s") so that
// files and scenario.json read as people write them. It lives here, beside
// the topology's vocabulary, so that a spec that imports neither Docker nor
// go-redis can hold one.
type Duration time.Duration

// D is the duration as the time package takes it.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a Go duration string. A number is refused: it would
// not say its unit (the old *_ms fields, which did, are read by
// scenarios' upgradeLegacy).
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
