package scenarios

import (
	"encoding/json"
	"fmt"
	"time"
)

// legacyDurations are the names the spec's durations had before they were
// Go duration strings: whole milliseconds, or (in files) a duration
// string under the old name. Runs stored then still read.
var legacyDurations = map[string]string{
	"ttl_ms": "ttl", "hold_min_ms": "hold_min", "hold_max_ms": "hold_max", "pause_ms": "pause",
	"time_ms": "time", "settle_ms": "settle", "run_on_ms": "run_on",
}

// upgradeLegacy renames a decoded spec's old *_ms fields, in place, to
// their names now, their numbers of milliseconds made duration strings.
func upgradeLegacy(raw any) error {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil // not an object: the decoder says what is wrong
	}
	for old, name := range legacyDurations {
		v, ok := obj[old]
		if !ok {
			continue
		}
		if _, both := obj[name]; both {
			return fmt.Errorf("%s: the old name of %s, which is given too", old, name)
		}
		delete(obj, old)
		switch n := v.(type) {
		case json.Number:
			ms, err := n.Int64()
			if err != nil {
				return fmt.Errorf("%s: want whole milliseconds, got %s", old, n)
			}
			v = (time.Duration(ms) * time.Millisecond).String()
		case float64:
			if n != float64(int64(n)) {
				return fmt.Errorf("%s: want whole milliseconds, got %g", old, n)
			}
			v = (time.Duration(n) * time.Millisecond).String()
		case string:
			if _, err := time.ParseDuration(n); err != nil {
				return fmt.Errorf("%s: bad duration %q (whole milliseconds, or a Go duration such as \"1.5s\")", old, n)
			}
		}
		obj[name] = v
	}
	return nil
}
