package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// helpShown is -h or --help: the command's flags go to stdout, exit 0.
type helpShown struct{ text string }

func (h helpShown) Error() string { return "help requested" }

// nameList parses a comma-separated list of names into *dst, replacing
// it; an empty name (a stray comma) is an error naming what was listed.
func nameList(what string, dst *[]string) func(string) error {
	return func(s string) error {
		var names []string
		for _, name := range strings.Split(s, ",") {
			if name = strings.TrimSpace(name); name == "" {
				return fmt.Errorf("empty %s name in %q", what, s)
			}
			names = append(names, name)
		}
		*dst = names
		return nil
	}
}

// lockOptions parses one KNOB=VALUE of a repeatable --lock-option into
// *dst: the library's own settings, checked against the lock's knobs when
// the run is prepared. A knob given twice is an error.
func lockOptions(dst *map[string]string) func(string) error {
	return func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return fmt.Errorf("want KNOB=VALUE (deadbolt locks --options LOCK lists a lock's knobs), got %q", s)
		}
		if _, dup := (*dst)[k]; dup {
			return fmt.Errorf("knob %s given twice", k)
		}
		if *dst == nil {
			*dst = map[string]string{}
		}
		(*dst)[k] = strings.TrimSpace(v)
		return nil
	}
}

// lockOptionHelp is --lock-option's help.
const lockOptionHelp = "KNOB=VALUE: a setting of the lock's library (its client's retries, timeouts, the library's tries, ...), repeatable; every other knob keeps the library's default (deadbolt locks --options LOCK lists them)"

// bounded parses a whole number from lo to hi into *dst.
func bounded(dst *int, lo, hi int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("must be from %d to %d, got %q", lo, hi, v)
		}
		*dst = n
		return nil
	}
}

// parse parses flags wherever they stand among the positional arguments
// ("run NAME --seed 3" as well as "run --seed 3 NAME").
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, helpShown{flagsOf(fs)}
			}
			return nil, badInput("%s: %v (deadbolt %s --help lists its flags)", fs.Name(), err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// flagsOf is the command's help, the flag set's usage: its name, its
// lines of the general usage, then each flag as the flag package prints
// it.
func flagsOf(fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage of deadbolt %s:\n", fs.Name())
	b.WriteString(synopsis(fs.Name()))
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		b.WriteString("flags:\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return b.String()
}

// synopsis is the general usage's lines of the named command.
func synopsis(name string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(usage, "\n") {
		if strings.HasPrefix(line, "  deadbolt "+name+" ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// withoutFlags is args without the named flags (each takes a value, given
// as -name v, --name v or --name=v).
func withoutFlags(args []string, names ...string) []string {
	var out []string
	for k := 0; k < len(args); k++ {
		a := args[k]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains(names, name) {
			if !hasValue {
				k++ // the value is the next argument
			}
			continue
		}
		out = append(out, a)
	}
	return out
}
