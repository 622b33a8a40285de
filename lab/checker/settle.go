package main

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// Writes without an answer are what makes porcupine slow: each may be placed anywhere after its call, so while
// it proves a history illegal it tries them applied and not at every step after it, for each of them. Before the
// check, two rewritings that change no verdict settle most of them, when the value written tells them apart
// (writers write values of their own):
//
//   - one nobody saw (no read returned its value, no compare-and-set expected it) is left out: placed last, where
//     it changes nothing, it keeps any linearization of the others valid, and the others' linearization without
//     it stays valid as long as nothing could have noticed it. A compare-and-set that answered false could have
//     (the key held something other than it expected), so such a write is kept when one that returned after its
//     call expected a value the key can hold;
//   - one whose value was seen, and written by nothing else, took effect before the first operation that saw it
//     returned: that return becomes its own (a bound every linearization meets).
//
// An anomaly shown with such a write keeps the operation that bounded it (check.go, asRecorded), so that it stands
// on its own.

// settleUnanswered rewrites each key's unanswered writes as above.
func settleUnanswered(ops []porcupine.Operation) []porcupine.Operation {
	var settled []porcupine.Operation
	for _, key := range partitionByKey(ops) {
		settled = append(settled, settleKey(key)...)
	}
	return settled
}

// valuesSeen is what one key's operations tell of its values.
type valuesSeen struct {
	writers      map[string]int                 // value -> how many operations write it
	firstSeen    map[string]porcupine.Operation // value -> the operation that saw it and returned first
	expected     map[string]bool                // values some compare-and-set expected
	lastNoticing int64                          // latest return of a compare-and-set answering false that could notice a write
}

func settleKey(ops []porcupine.Operation) []porcupine.Operation {
	seen := lookAtValues(ops)
	settled := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		in := op.Input.(input)
		if op.Output.(answer).known || in.f == "get" || in.f == "delete" {
			settled = append(settled, op)
			continue
		}
		first, wasSeen := seen.firstSeen[in.value]
		switch {
		case wasSeen && seen.writers[in.value] == 1 && first.Return >= op.Call:
			settled = append(settled, boundedBy(op, first))
		case !wasSeen && !seen.expected[in.value] && seen.lastNoticing < op.Call:
			// nobody could have noticed it: left out
		default:
			settled = append(settled, op)
		}
	}
	return settled
}

func lookAtValues(ops []porcupine.Operation) valuesSeen {
	seen := valuesSeen{writers: map[string]int{}, firstSeen: map[string]porcupine.Operation{}, expected: map[string]bool{}, lastNoticing: -1}
	for _, op := range ops {
		in, out := op.Input.(input), op.Output.(answer)
		if in.f == "put" || in.f == "cas" {
			seen.writers[in.value]++
		}
		if in.f == "cas" && in.expect.present {
			seen.expected[in.expect.value] = true
		}
		var saw register
		switch {
		case in.f == "get":
			saw = out.value
		case in.f == "cas" && out.known && out.succeeded:
			saw = in.expect
		default:
			continue
		}
		if first, ok := seen.firstSeen[saw.value]; saw.present && (!ok || op.Return < first.Return) {
			seen.firstSeen[saw.value] = op
		}
	}
	// A compare-and-set that answered false noticed that the key held something other than what it expected: an
	// unanswered write may be why, unless the key could never have held that (a value nobody writes).
	for _, op := range ops {
		in, out := op.Input.(input), op.Output.(answer)
		if in.f == "cas" && out.known && !out.succeeded && (!in.expect.present || seen.writers[in.expect.value] > 0) {
			seen.lastNoticing = max(seen.lastNoticing, op.Return)
		}
	}
	return seen
}

// boundedBy gives an unanswered write the return of the first operation that saw its value, and remembers which.
func boundedBy(op, first porcupine.Operation) porcupine.Operation {
	meta := op.Metadata.(operationMetadata)
	firstMeta := first.Metadata.(operationMetadata)
	op.Return = first.Return
	op.Metadata = operationMetadata{
		index:     meta.index,
		text:      fmt.Sprintf("%s; seen by operation %d, so applied before it returned", meta.text, firstMeta.index),
		boundedBy: firstMeta.index,
		bounded:   true,
	}
	return op
}
