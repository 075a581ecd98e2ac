package checker

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/internal/dense"
)

// leaseBook refuses a history in which a lease is not one grant of one
// client: the harness names each grant once (pN.M: client process N's M-th
// acquire), so a lease acquired twice, acquired by a process its name does
// not give, or used by another client would let a real overlap vanish (a
// second grant of a name is no second window; another's release ends the
// owner's). Such a history is malformed, never judged on a guess.
//
// A client's successor is a process that continues it after an unknown
// outcome (history.Op.Next) and may release or use its leases. Renewals
// come from the owner or from a watchdog process of its own, which renews
// one lease and does nothing else.
type leaseBook struct {
	// granted marks the leases in the harness's form (pN.M) that process
	// N acquired, bit M of N's set: a bit per grant, where maps of names
	// would hold a history's every lease (the most memory a long history
	// took). Leases named otherwise are in owner and asked.
	granted *leaseSet
	owner   map[string]int32 // lease -> the process that asked for it
	asked   map[string]int32 // lease -> the index of that acquire
	// root is each successor's first ancestor: processes that share a
	// root are one client.
	root dense.Map[int32]
	// watching is a watchdog process's lease; acting marks processes that
	// acquire, release or use a resource.
	watching dense.Map[string]
	acting   dense.Map[struct{}]
}

func newLeaseBook() *leaseBook {
	return &leaseBook{granted: newLeaseSet(), owner: map[string]int32{}, asked: map[string]int32{}}
}

func (b *leaseBook) rootOf(p int32) int32 {
	if r := b.root.Ptr(int(p)); r != nil {
		return *r
	}
	return p
}

// add checks op, whose lease reads as name; the error names the op and
// the rule it broke.
func (b *leaseBook) add(op *history.Op, name leaseName) error {
	p := int32(op.Process)
	if op.Process < 0 {
		return nil
	}
	if op.Next > 0 {
		b.root.Set(op.Next, b.rootOf(p))
	}
	if op.Type != history.Invoke || op.Lease == "" {
		return nil
	}
	switch op.F {
	case history.Acquire:
		if _, dup := b.ownerOf(name, op.Lease); dup {
			return fmt.Errorf("op %d: lease %s is acquired again: the harness names each grant once", op.Index, op.Lease)
		}
		name = name.resolve(op.Lease)
		n, ok := int(name.n), name.ok()
		if !ok {
			n, ok = namedProcess(op.Lease) // a looser form, as "p01.2"
		}
		if ok && n != op.Process {
			return fmt.Errorf("op %d: process %d acquires lease %s, a name that belongs to process %d", op.Index, op.Process, op.Lease, n)
		}
		if name.ok() {
			b.granted.add(name, op.Lease)
		} else {
			// Clones: the reading's strings share chunks (strarena) that a
			// string kept for the whole history would pin.
			lease := strings.Clone(op.Lease)
			b.owner[lease], b.asked[lease] = p, int32(op.Index)
		}
		return b.acts(op)
	case history.Renew, history.Lost:
		owner, known := b.ownerOf(name, op.Lease)
		if !known || b.rootOf(owner) == b.rootOf(p) {
			return nil
		}
		if b.acting.Ptr(int(p)) != nil {
			return fmt.Errorf("op %d: process %d, a client, renews lease %s of process %d", op.Index, op.Process, op.Lease, owner)
		}
		w := b.watching.Ptr(op.Process)
		if w != nil && *w != op.Lease {
			return fmt.Errorf("op %d: watchdog process %d renews lease %s after lease %s: a watchdog serves one lease", op.Index, op.Process, op.Lease, *w)
		}
		if w == nil {
			b.watching.Set(op.Process, strings.Clone(op.Lease))
		}
		return nil
	}
	if owner, known := b.ownerOf(name, op.Lease); known && b.rootOf(owner) != b.rootOf(p) {
		return fmt.Errorf("op %d: process %d's %s names lease %s of process %d, which it does not continue", op.Index, op.Process, op.F, op.Lease, owner)
	}
	return b.acts(op)
}

// client is the client op acts for: the lease owner's first process, or
// op's own for an op without a known lease; its lease reads as name.
func (b *leaseBook) client(op *history.Op, name leaseName) int32 {
	if owner, ok := b.ownerOf(name, op.Lease); ok {
		return b.rootOf(owner)
	}
	return b.rootOf(int32(op.Process))
}

// acts marks a client process, which no watchdog may be.
func (b *leaseBook) acts(op *history.Op) error {
	p := int32(op.Process)
	if w := b.watching.Ptr(op.Process); w != nil {
		return fmt.Errorf("op %d: process %d, the watchdog of lease %s, %ss", op.Index, op.Process, *w, op.F)
	}
	b.acting.Set(int(p), struct{}{})
	return nil
}

// namedProcess reads N from a lease named pN.M, the harness's form.
func namedProcess(lease string) (int, bool) {
	n, m, ok := strings.Cut(strings.TrimPrefix(lease, "p"), ".")
	if !ok || !strings.HasPrefix(lease, "p") {
		return 0, false
	}
	pn, err1 := strconv.Atoi(n)
	_, err2 := strconv.Atoi(m)
	return pn, err1 == nil && err2 == nil && pn >= 0
}

// ownerOf is the process that acquired lease, which reads as name, if
// one did.
func (b *leaseBook) ownerOf(name leaseName, lease string) (int32, bool) {
	if name = name.resolve(lease); name.ok() {
		return name.n, b.granted.has(name, lease)
	}
	owner, ok := b.owner[lease]
	return owner, ok
}

// maxLeaseSeq bounds M in the harness's names pN.M that granted keeps
// as bits; a name with a larger M is kept by name.
const maxLeaseSeq = 1 << 26

// leaseName is a lease's N and M (as m1, M+1) when the harness named it
// pN.M (harnessName), read once for all that look it up. m1 is -1 for a
// lease named otherwise, and 0 in the zero value: not read yet (resolve).
type leaseName struct{ n, m1 int32 }

func (n leaseName) ok() bool { return n.m1 > 0 }

func (n leaseName) m() int { return int(n.m1) - 1 }

// nameOf reads lease.
func nameOf(lease string) leaseName {
	n, m, ok := harnessName(lease)
	if !ok {
		return leaseName{-1, -1}
	}
	return leaseName{int32(n), int32(m) + 1}
}

// resolve is name, read from lease if it was not yet.
func (n leaseName) resolve(lease string) leaseName {
	if n.m1 == 0 {
		return nameOf(lease)
	}
	return n
}

// harnessName reads N and M from a lease named pN.M, the harness's form,
// with both written plainly (so that each name has one reading): such a
// lease is kept as bit M of N's set.
func harnessName(lease string) (n, m int, ok bool) {
	// One pass, no strconv: every lease of every lock operation is read.
	if len(lease) < 4 || lease[0] != 'p' {
		return 0, 0, false
	}
	n, i, ok := plainPrefix(lease, 1, math.MaxInt32)
	if !ok || i >= len(lease) || lease[i] != '.' {
		return 0, 0, false
	}
	m, i, ok = plainPrefix(lease, i+1, maxLeaseSeq-1)
	return n, m, ok && i == len(lease)
}

// plainPrefix reads the plain decimal number (no sign, no leading zero)
// at s[i:], up to limit, and where it ends.
func plainPrefix(s string, i, limit int) (n, end int, ok bool) {
	start := i
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
		if n > limit {
			return 0, i, false
		}
	}
	if i == start || i-start > 1 && s[start] == '0' {
		return 0, i, false
	}
	return n, i, true
}
