package history

// OpsFrom returns a copy of the operations recorded from index i on (none
// when i is past the end), so that a reader following a run as it goes
// (a progress line) reads each operation once rather than the whole
// history every time.
func (r *Recorder) OpsFrom(i int) []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < 0 {
		i = 0
	}
	if i >= len(r.ops) {
		return nil
	}
	return append([]Op(nil), r.ops[i:]...)
}
