// Package checker turns a recorded history into a verdict on the lock that
// produced it, and on what it did to the data it protected. Everything here
// is a pure function of []history.Op: no I/O, no Redis, no clock, so a
// history.jsonl saved by a run can be checked again later and give the same
// answer.
//
// The judge does not take the lock's word (windows.go): leases are named
// by the harness, and holding windows are computed from the harness's clock
// and the configured TTL; tokens and deadlines the lock reports are shown,
// never used.
//
// Each property is one Checker, registered by name, run over a shared Input
// and composed by Check as Jepsen composes checkers (invalid > unknown >
// valid; a check with nothing to judge does not vote):
//
//   - double-holds: two leases whose windows overlap on one key.
//   - lease-lock: a porcupine model of a lease lock; catches a grant while
//     the previous lease could not yet have expired, even when clients
//     happened not to overlap.
//   - liveness: a key that stays taken when no lease can explain it.
//   - releases: an ok release by a lease that did not hold the key.
//   - lost-updates, fencing, orders: what the resource suffered.
//
// A history read from a file (CheckFile, CheckReader) is streamed into a
// compact lock view when every chosen checker reads only that view, so a
// million operations are checked in a few hundred megabytes.
//
// Leases make a plain mutex model wrong: expiry is an implicit release that
// never appears in the history. The checkers therefore treat a handoff after
// a lease ran out as legal, and keep "unknown" (timed out, too little
// happened, malformed history) apart from "valid".
package checker
