package locks

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/internal/suggest"
)

// A library lock runs as its users run it: the client its README builds,
// with that client's and the library's defaults. Knobs are the settings a
// user may change (go-redis's max_retries, redsync's tries, redis-py's
// socket_timeout), each declared by the lock's driver with the default
// the library gives it; Settings are their values for one run.

// Knob kinds: how a knob's value is written.
const (
	KnobDuration = "duration" // a Go duration ("200ms"); an integer is the library's own number (go-redis's -1)
	KnobInt      = "int"
	KnobFloat    = "float"
	KnobBool     = "bool"
	KnobChoice   = "choice" // one of Choices
)

// KnobNone is the value of a knob that is not set at all where the
// library takes no value as "no bound" (redis-py's socket_timeout=None).
const KnobNone = "none"

// Knob is one setting of a library lock, as the library's users set it.
type Knob struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Default is the library's own value, read from a client or lock the
	// library built with nothing set where it exposes one.
	Default string   `json:"default"`
	Choices []string `json:"choices,omitempty"`
	// Nullable: "none" is a value (no bound), as the library allows.
	Nullable bool   `json:"nullable,omitempty"`
	Summary  string `json:"summary"`
	// From names the scenario's own lock option that sets this knob when
	// the scenario gives it (timeout_ms, retries, tries, retry_delay_ms,
	// wait_ms): a scenario written for any lock ("the call timeout is
	// 500 ms") says the same to a library, in the library's terms.
	From string `json:"from,omitempty"`
}

// The scenario's own lock options a knob may take its value from
// (Knob.From): tries is retries + 1.
const (
	FromTimeout    = "timeout_ms"
	FromRetries    = "retries"
	FromTries      = "tries"
	FromRetryDelay = "retry_delay_ms"
	FromWait       = "wait_ms"
)

// Knobs are a lock's knobs, in the order it lists them.
type Knobs []Knob

// Names lists the knobs' names, in order.
func (ks Knobs) Names() []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Name
	}
	return out
}

// Get is the named knob.
func (ks Knobs) Get(name string) (Knob, bool) {
	for _, k := range ks {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

// Check checks the knobs' own declarations: unique names, a known kind, a
// default of that kind, a known From.
func (ks Knobs) Check() error {
	seen := map[string]bool{}
	for _, k := range ks {
		if k.Name == "" || seen[k.Name] {
			return fmt.Errorf("knob %q: empty or declared twice", k.Name)
		}
		seen[k.Name] = true
		if _, err := k.Parse(k.Default); err != nil {
			return fmt.Errorf("knob %s: its default: %w", k.Name, err)
		}
		switch k.From {
		case "", FromTimeout, FromRetries, FromTries, FromRetryDelay, FromWait:
		default:
			return fmt.Errorf("knob %s: from %q is no lock option (known: %s, %s, %s, %s, %s)", k.Name, k.From, FromTimeout, FromRetries, FromTries, FromRetryDelay, FromWait)
		}
	}
	return nil
}

// Parse reads v as the knob's kind and returns its canonical text
// (durations as Go writes them, so "0.2s" and "200ms" are one value).
func (k Knob) Parse(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == KnobNone {
		if k.Nullable {
			return KnobNone, nil
		}
		return "", fmt.Errorf("%s is no value of %s (it takes %s)", v, k.Name, k.takes())
	}
	switch k.Kind {
	case KnobDuration:
		if d, err := time.ParseDuration(v); err == nil {
			return d.String(), nil
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return strconv.FormatInt(n, 10), nil // the library's own number (-1: no timeout)
		}
	case KnobInt:
		if n, err := strconv.Atoi(v); err == nil {
			return strconv.Itoa(n), nil
		}
	case KnobFloat:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64), nil
		}
	case KnobBool:
		if b, err := strconv.ParseBool(v); err == nil {
			return strconv.FormatBool(b), nil
		}
	case KnobChoice:
		if slices.Contains(k.Choices, v) {
			return v, nil
		}
	default:
		return "", fmt.Errorf("knob %s has unknown kind %q", k.Name, k.Kind)
	}
	return "", fmt.Errorf("%q is no value of %s (it takes %s)", v, k.Name, k.takes())
}

// takes says what values the knob takes.
func (k Knob) takes() string {
	var s string
	switch k.Kind {
	case KnobDuration:
		s = "a duration such as 200ms"
	case KnobInt:
		s = "a whole number"
	case KnobFloat:
		s = "a number"
	case KnobBool:
		s = "true or false"
	case KnobChoice:
		s = "one of " + strings.Join(k.Choices, ", ")
	}
	if k.Nullable {
		s += ", or none"
	}
	return s
}

// Settings are the values of a lock's knobs for one run, every knob's.
type Settings map[string]string

// Resolve gives every knob its value: the library's default, unless the
// scenario's own lock option the knob takes its value from was given
// (generic: raw, before any default of deadbolt's), unless the user set the
// knob itself (given). An unknown knob or a bad value is an error naming
// the known knobs.
func (ks Knobs) Resolve(given map[string]string, generic Options) (Settings, error) {
	s := Settings{}
	for _, k := range ks {
		s[k.Name] = k.Default
		if v, ok := k.generic(generic); ok {
			s[k.Name] = v
		}
	}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		k, ok := ks.Get(name)
		if !ok {
			if len(ks) == 0 {
				return nil, fmt.Errorf("unknown lock option %q: this lock takes no options", name)
			}
			return nil, fmt.Errorf("unknown lock option %q (known: %s)%s", name, strings.Join(ks.Names(), ", "), suggest.Hint(name, ks.Names()))
		}
		v, err := k.Parse(given[name])
		if err != nil {
			return nil, fmt.Errorf("lock option %s: %w", name, err)
		}
		s[name] = v
	}
	return s, nil
}

// generic is the knob's value from the scenario's own lock option, when
// that was given.
func (k Knob) generic(o Options) (string, bool) {
	var v string
	switch k.From {
	case FromTimeout:
		v = durationOption(o.Timeout)
	case FromRetryDelay:
		v = durationOption(o.RetryDelay)
	case FromWait:
		v = durationOption(o.Wait)
	case FromRetries:
		if o.Retries > 0 {
			v = strconv.Itoa(o.Retries)
		}
	case FromTries:
		if o.Retries > 0 {
			v = strconv.Itoa(o.Retries + 1)
		}
	}
	if v == "" {
		return "", false
	}
	out, err := k.Parse(v)
	return out, err == nil
}

func durationOption(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// Changed are the settings that differ from the knobs' defaults, as
// "name=value" in the knobs' order: what a report shows of how the lock
// was run.
func (s Settings) Changed(ks Knobs) []string {
	var out []string
	for _, k := range ks {
		if v, ok := s[k.Name]; ok && v != k.Default {
			out = append(out, k.Name+"="+v)
		}
	}
	return out
}

// The typed values of settings, for the driver that applies them. A knob
// the settings do not hold is a driver's own mistake (it reads a knob it
// never declared): it panics, and the lock's tests catch it.

func (s Settings) raw(name string) string {
	v, ok := s[name]
	if !ok {
		panic("locks: no setting " + name)
	}
	return v
}

// IsNone reports a nullable knob set to none.
func (s Settings) IsNone(name string) bool { return s.raw(name) == KnobNone }

// Duration is a duration knob's value (0 for none).
func (s Settings) Duration(name string) time.Duration {
	v := s.raw(name)
	if v == KnobNone {
		return 0
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic("locks: setting " + name + " is no duration: " + v)
	}
	return time.Duration(n)
}

// Int is an int knob's value.
func (s Settings) Int(name string) int {
	n, err := strconv.Atoi(s.raw(name))
	if err != nil {
		panic("locks: setting " + name + " is no whole number: " + s.raw(name))
	}
	return n
}

// Float is a float knob's value.
func (s Settings) Float(name string) float64 {
	f, err := strconv.ParseFloat(s.raw(name), 64)
	if err != nil {
		panic("locks: setting " + name + " is no number: " + s.raw(name))
	}
	return f
}

// Bool is a bool knob's value.
func (s Settings) Bool(name string) bool {
	b, err := strconv.ParseBool(s.raw(name))
	if err != nil {
		panic("locks: setting " + name + " is not true or false: " + s.raw(name))
	}
	return b
}

// String is a knob's value as text (a choice's).
func (s Settings) String(name string) string { return s.raw(name) }

// DurationText writes a duration as a knob's default.
func DurationText(d time.Duration) string { return d.String() }
