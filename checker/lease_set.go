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

// empty empties s for another use; the bits keep their memory.
func (s *leaseSet) empty() {
	for _, bits := range s.bits.All() {
		clear(bits)
	}
	clear(s.names)
}

// add adds lease, read already as name (the zero name: read it here).
func (s *leaseSet) add(name leaseName, lease string) {
	if name = name.resolve(lease); !name.ok() {
		s.names[lease] = struct{}{}
		return
	}
	n, m := int(name.n), name.m()
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

// has reports whether lease, read already as name, is in s.
func (s *leaseSet) has(name leaseName, lease string) bool {
	if name = name.resolve(lease); !name.ok() {
		_, in := s.names[lease]
		return in
	}
	n, m := int(name.n), name.m()
	bits := s.bits.Ptr(n)
	return bits != nil && m/64 < len(*bits) && (*bits)[m/64]&(1<<(m%64)) != 0
}
