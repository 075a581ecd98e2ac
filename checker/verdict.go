package checker

// Verdict is a checker's answer, as in Jepsen: a history is valid, invalid,
// or unknown when the checker could not decide (it timed out, too little
// happened, or the history could not be read).
type Verdict string

const (
	Valid   Verdict = "valid"
	Invalid Verdict = "invalid"
	Unknown Verdict = "unknown"
)

// rank orders verdicts for Merge. Anything unrecognised counts as unknown, so
// a zero Verdict never turns into a pass.
func (v Verdict) rank() int {
	switch v {
	case Invalid:
		return 2
	case Valid:
		return 0
	}
	return 1
}

var byRank = [...]Verdict{Valid, Unknown, Invalid}

// Merge composes verdicts the way Jepsen composes checkers: invalid beats
// unknown beats valid. A proven violation stands even if another checker
// could not decide; an undecided checker keeps the whole from passing.
// Merge of nothing is Valid, the identity of the composition.
func Merge(vs ...Verdict) Verdict {
	out := Valid
	for _, v := range vs {
		if v.rank() > out.rank() {
			out = byRank[v.rank()]
		}
	}
	return out
}
