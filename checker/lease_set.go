package checker

// leaseSet is a set of lease names that holds one the harness named (pN.M)
// as one bit, as leaseBook does, so that marking every lease of a long
// history costs a bit each.
type leaseSet struct {
	bits  map[int32][]uint64
	names map[string]struct{}
}

func newLeaseSet() *leaseSet {
	return &leaseSet{bits: map[int32][]uint64{}, names: map[string]struct{}{}}
}

func (s *leaseSet) add(lease string) {
	n, m, ok := harnessName(lease)
	if !ok {
		s.names[lease] = struct{}{}
		return
	}
	bits := s.bits[int32(n)]
	for len(bits) <= m/64 {
		bits = append(bits, 0)
	}
	bits[m/64] |= 1 << (m % 64)
	s.bits[int32(n)] = bits
}

func (s *leaseSet) has(lease string) bool {
	n, m, ok := harnessName(lease)
	if !ok {
		_, in := s.names[lease]
		return in
	}
	bits := s.bits[int32(n)]
	return m/64 < len(bits) && bits[m/64]&(1<<(m%64)) != 0
}
