// Package checker turns a recorded history into a verdict on the lock that
// produced it. Everything here is a pure function of []history.Op: no I/O,
// no Redis, no clock, so a history.jsonl saved by a run can be checked again
// later and give the same answer.
//
// Two checkers look at the lock from two sides:
//
//   - the double-hold sweep (holds.go) asks whether two clients ever believed
//     they held the same key at the same time, using each lease's client-side
//     validity deadline. This is the failure users see.
//   - the lease-lock model (leaselock.go) asks whether some order of the lock
//     operations, each taking effect between its invoke and its return, is
//     legal for a lock whose leases expire. It catches a server that granted
//     a key while the previous lease could not yet have expired, even when
//     clients happened not to overlap.
//
// Leases make a plain mutex model wrong: expiry is an implicit release that
// never appears in the history. Both checkers therefore treat a handoff after
// a lease ran out as legal, and keep "unknown" (timed out, too little
// happened, malformed history) apart from "valid".
//
// Check composes them, Jepsen-style, into one Result; faults.go names the
// nemesis faults that were active when something went wrong.
package checker
