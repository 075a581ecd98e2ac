package checker

// Parted is a checker that reads only the lock view of a history, and
// whose findings on a history are the union of its findings on each key
// (and on each window of a key, window.go): a history read from a file is
// checked key by key and window by window (keyed.go), and Merge composes
// the parts into the very result Check gives on the whole history. A
// checker declares it by its methods alone: keyed.go and window.go loop
// over the chosen checkers with no case for any, CheckReader streams a
// history when every chosen checker is Parted, and paths_test.go holds
// every registered checker's result on each path it declares to its
// whole-history one.
//
// A checker whose findings in a window could differ from those on the
// whole key (a search that may need operations on both sides of a cut, a
// threshold that changed midway) calls at.CheckWhole: the key is then
// read again and its Part called once with the whole key.
type Parted interface {
	Checker
	// Part checks one key's lock view, one window of it, or (in Check) the
	// whole history, in time order; at says which, and what came before.
	Part(in *Input, at PartAt) (part, carry any)
	// Merge composes the parts, in key order and each key's windows in
	// order, into the result. whole is the history's summary: its faults,
	// phases, end, leases that arrived expired and stats, without its
	// operations.
	Merge(whole *Input, parts []any) Result
}

// PartAt is where a part lies in its key's history.
type PartAt struct {
	// Key is the key checked; "" for the whole history.
	Key string
	// Before reports the leases granted in an earlier window of the key
	// and still open when this one began, with the process that acquired
	// each; nil for a whole key.
	Before func(lease string) (process int, ok bool)
	// Carry is what Part returned as carry for the key's window before
	// (nil for the first, and for a whole key).
	Carry any
	// Open reports the leases still open after this window, the only ones
	// a later window may name (a later operation naming another sends the
	// key to be checked whole); nil for a whole key.
	Open func(lease string) bool
	// Last: nothing of the key comes after this part (true for a whole key).
	Last bool
	// CheckWhole sends the key to be checked whole: what this window and
	// the ones before found is dropped. Nil for a whole key.
	CheckWhole func()
	// Abandoned is, for a key checked whole after its windows were not
	// enough, the carry its last window left (what they spent, say).
	Abandoned any
}

// Windowed reports whether the part is one window of a key.
func (at PartAt) Windowed() bool { return at.Open != nil }

// wholePart is where the one part of a whole key or history lies.
var wholePart = PartAt{Last: true}

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
	part, _ := p.Part(in, wholePart)
	return p.Merge(in, []any{part})
}
