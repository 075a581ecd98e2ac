package checker

// Parted is a checker that reads only the lock view of a history, and
// whose findings on a history are the union of its findings on each key
// (and on each window of a key, window.go): a history read from a file is
// checked key by key and window by window (keyed.go), and Merge composes
// the parts into the very result Check gives on the whole history. A
// checker that declares it is one file; keyed.go and window.go need no
// case for it, and keyed_test.go holds every Parted checker's keyed result
// to its whole-history one.
type Parted interface {
	Checker
	// Part checks one key's lock view, or one window of it, in time
	// order; at says what came before.
	Part(in *Input, at PartAt) (part, carry any)
	// Merge composes the parts, in key order and each key's windows in
	// order, into the result.
	Merge(parts []any) Result
}

// PartAt is where a part lies in its key's history.
type PartAt struct {
	// Before reports the leases granted in an earlier window of the key
	// and still open when this one began; nil for a whole key.
	Before func(lease string) bool
	// Carry is what Part returned as carry for the key's window before
	// (nil for the first, and for a whole key).
	Carry any
	// Open reports the leases still open after this window, the only ones
	// a later window may name (a later operation naming another sends the
	// key to be checked whole); nil for a whole key.
	Open func(lease string) bool
}

// partedOf is the named checker as a Parted one, if it is.
func partedOf(name string, opts Options) (Parted, bool) {
	e, ok := registry[name]
	if !ok {
		return nil, false
	}
	p, ok := e.build(opts).(Parted)
	return p, ok
}

// checkWhole is Check for a Parted checker: its one part, merged.
func checkWhole(p Parted, in *Input) Result {
	part, _ := p.Part(in, PartAt{})
	return p.Merge([]any{part})
}
