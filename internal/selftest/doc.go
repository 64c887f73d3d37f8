// Package selftest proves the gate goes red on what it must stop.
//
// It takes a render that passes, and for every enabled rule builds mutants
// — copies changed so the rule must fire (a digest replaced by :latest, a
// pause removed, an AnalysisTemplate name misspelled, the render emptied) —
// runs the real gate on each, and reports rule × expected × got. A mutant
// that passes means the gate would let that outage through.
package selftest
