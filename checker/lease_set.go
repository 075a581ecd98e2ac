package checker

import "github.com/deadbolt-lab/deadbolt/internal/dense"

// leaseSet is a set of lease names that holds one the harness named (pN.M)
// as one bit, as leaseBook does, so that marking every lease of a long
// history costs a bit each.
type leaseSet struct {
	bits  dense.Map[[]uint64] // by N, as process ids are: small and dense
	names map[string]struct{}
}

func newLeaseSet() *leaseSet {
	return &leaseSet{names: map[string]struct{}{}}
}

func (s *leaseSet) add(lease string) {
	n, m, ok := harnessName(lease)
	s.addNamed(lease, n, m, ok)
}

// addOp adds l's lease, its name read once per operation (lockOp.harnessLease).
func (s *leaseSet) addOp(l *lockOp) {
	n, m, ok := l.harnessLease()
	s.addNamed(l.lease, n, m, ok)
}

// addNamed adds lease, named pN.M by the harness when ok.
func (s *leaseSet) addNamed(lease string, n, m int, ok bool) {
	if !ok {
		s.names[lease] = struct{}{}
		return
	}
	bits := s.bits.Ptr(n)
	if bits == nil {
		s.bits.Set(n, nil)
		bits = s.bits.Ptr(n)
	}
	for len(*bits) <= m/64 {
		*bits = append(*bits, 0)
	}
	(*bits)[m/64] |= 1 << (m % 64)
}

func (s *leaseSet) has(lease string) bool {
	n, m, ok := harnessName(lease)
	return s.hasNamed(lease, n, m, ok)
}

func (s *leaseSet) hasOp(l *lockOp) bool {
	n, m, ok := l.harnessLease()
	return s.hasNamed(l.lease, n, m, ok)
}

func (s *leaseSet) hasNamed(lease string, n, m int, ok bool) bool {
	if !ok {
		_, in := s.names[lease]
		return in
	}
	bits := s.bits.Ptr(n)
	return bits != nil && m/64 < len(*bits) && (*bits)[m/64]&(1<<(m%64)) != 0
}
