package main

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Shrinking an illegal key's history to a small part that is still illegal. Dropping just any operation while
// porcupine still says illegal would make anomalies up: without the put whose value a read returned, that read
// alone is illegal. So only removals that cannot turn a linearizable history illegal are tried; whatever remains
// illegal then shows a real anomaly of the whole:
//
//   - a read (a get, or a compare-and-set that answered false): it changes no state, so the others' linearization
//     stands without it;
//   - the answered operations before a moment when no answered one is in flight: every linearization has them
//     before the other answered ones, and a write without an answer placed among them can be placed after
//     everything instead, so the rest is linearizable from the state they left, which is then taken as unknown
//     (keyState.known false: the model lets it be anything until an operation tells);
//   - the operations called after every answered operation kept has returned: every linearization has the
//     answered ones before them, and a write without an answer kept is possible anywhere.

// part is a sub-history of one key: its operations in the order of their calls, and the state it starts from.
type part struct {
	ops     []porcupine.Operation
	initial keyState
}

func shrink(ops []porcupine.Operation, deadline time.Time) []porcupine.Operation {
	p := part{ops: slices.SortedStableFunc(slices.Values(ops), byCall), initial: startsAbsent}
	// What follows the anomaly first, as that takes few checks of a long history; then the reads it does not
	// need, which leaves the writes it needs as the last operations before it, so the cut of what precedes keeps
	// them (cut first, it could keep reads in their place, as witnesses of the state); dropping reads makes
	// moments of quiescence that allow longer cuts. No removal here makes a linearizable part illegal, so none
	// makes room for one tried before (a read needed stays needed, a cut too short stays so): one round is all.
	p = cutSuffix(p, deadline)
	p = dropReads(p, deadline)
	p = forgetUnnoticed(p, deadline)
	p = cutSuffix(cutPrefix(p, deadline), deadline)
	return p.ops
}

// forgetUnnoticed settles the part's unanswered writes again (settle.go): with the reads it did not need gone, most
// of them are noticed by nothing left, and leaving them out changes no verdict, so they would only hide the
// anomaly among writes that may or may not have happened (a user trial saw 12 of 14 operations shown be such).
func forgetUnnoticed(p part, deadline time.Time) part {
	settled := part{ops: settleKey(p.ops), initial: p.initial}
	if len(settled.ops) == len(p.ops) || !stillIllegal(settled, deadline) {
		return p
	}
	return settled
}

func byCall(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) }

// stillIllegal: a check that runs out of time counts as legal, so that a removal is only kept when proved.
func stillIllegal(p part, deadline time.Time) bool {
	remaining := time.Until(deadline)
	if remaining <= 0 || len(p.ops) == 0 {
		return false
	}
	return porcupine.CheckOperationsTimeout(kvModel(p.initial), p.ops, remaining) == porcupine.Illegal
}

// cutPrefix drops the longest run of first answered operations that all returned before the other answered
// operations were called and leaves the rest illegal. Writes without an answer among them stay: any of them
// placed before the cut can be placed after everything instead. A longer cut is a cut of a shorter one, so
// legality only grows with the cut's length: a binary search over the possible cuts finds it.
func cutPrefix(p part, deadline time.Time) part {
	var cuts []int // the answered operations of p.ops[:i] dropped
	latestAnsweredReturn := int64(-1)
	for i := 1; i < len(p.ops); i++ {
		if isAnswered(p.ops[i-1]) {
			latestAnsweredReturn = max(latestAnsweredReturn, p.ops[i-1].Return)
		}
		if isAnswered(p.ops[i]) && latestAnsweredReturn < p.ops[i].Call {
			cuts = append(cuts, i)
		}
	}
	cutAt := func(c int) part {
		i := cuts[c]
		kept := slices.DeleteFunc(slices.Clone(p.ops[:i]), isAnswered)
		return part{ops: append(kept, p.ops[i:]...), initial: startsUnknown}
	}
	// The last cut that stays illegal: sort.Search finds the first that does not.
	legalFrom := sort.Search(len(cuts), func(c int) bool { return !stillIllegal(cutAt(c), deadline) })
	if legalFrom == 0 {
		return p
	}
	return cutAt(legalFrom - 1)
}

// isAnswered: not a write left without an answer (one given a return by settle.go counts as answered).
func isAnswered(op porcupine.Operation) bool { return op.Return != unknownReturn }

// cutSuffix drops the longest run of last operations, all called after every answered operation kept had
// returned, that leaves the rest illegal (a binary search, as in cutPrefix).
func cutSuffix(p part, deadline time.Time) part {
	var cuts []int // p.ops[:j] kept, in decreasing j: longer cuts last
	latestAnsweredReturn := make([]int64, len(p.ops)+1)
	latestAnsweredReturn[0] = -1
	for i, op := range p.ops {
		latestAnsweredReturn[i+1] = latestAnsweredReturn[i]
		if isAnswered(op) {
			latestAnsweredReturn[i+1] = max(latestAnsweredReturn[i], op.Return)
		}
	}
	for j := len(p.ops) - 1; j >= 1; j-- {
		if latestAnsweredReturn[j] < p.ops[j].Call {
			cuts = append(cuts, j)
		}
	}
	cutAt := func(i int) part { return part{ops: p.ops[:cuts[i]], initial: p.initial} }
	legalFrom := sort.Search(len(cuts), func(i int) bool { return !stillIllegal(cutAt(i), deadline) })
	if legalFrom == 0 {
		return p
	}
	return cutAt(legalFrom - 1)
}

// dropReads drops reads while the rest stays illegal: halves of them first, then smaller groups, then one at a
// time. A read needed once stays needed after others are dropped (dropping reads keeps what was linearizable
// so), so each is tried once at the finest grain.
func dropReads(p part, deadline time.Time) part {
	var reads []int // positions in p.ops
	for i, op := range p.ops {
		if isRead(op) {
			reads = append(reads, i)
		}
	}
	dropped := make([]bool, len(p.ops))
	without := func() part {
		kept := make([]porcupine.Operation, 0, len(p.ops))
		for i, op := range p.ops {
			if !dropped[i] {
				kept = append(kept, op)
			}
		}
		return part{ops: kept, initial: p.initial}
	}
	for group := (len(reads) + 1) / 2; len(reads) > 0; group = (group + 1) / 2 {
		var needed []int
		for start := 0; start < len(reads); start += group {
			tried := reads[start:min(start+group, len(reads))]
			setAll(dropped, tried, true)
			if !stillIllegal(without(), deadline) {
				setAll(dropped, tried, false)
				needed = append(needed, tried...)
			}
		}
		reads = needed
		if group == 1 {
			break
		}
	}
	return without()
}

// isRead: an operation that changes no state, so dropping it keeps a linearization of the others.
func isRead(op porcupine.Operation) bool {
	in, out := op.Input.(input), op.Output.(answer)
	return in.f == "get" || (in.f == "cas" && out.known && !out.succeeded)
}

func setAll(flags []bool, positions []int, value bool) {
	for _, i := range positions {
		flags[i] = value
	}
}
