package main

import (
	"fmt"
	"hash/fnv"

	"github.com/anishathalye/porcupine"
)

// register is what a key holds: a value, or absent.
type register struct {
	present bool
	value   string
}

var absent = register{}

func holding(value string) register { return register{present: true, value: value} }

// keyState is the model's state of one key. known is false only while shrinking an anomaly whose earlier
// operations were cut off (shrink.go): the key may then hold anything, until an operation tells what. A plain
// comparable struct, so that porcupine's default equality (==) compares states.
type keyState struct {
	known bool
	register
}

var (
	startsAbsent  = keyState{known: true}
	startsUnknown = keyState{}
)

// input is what a client asked for (test/support/history.ts, Input).
type input struct {
	f            string // get, put, delete or cas
	key          string
	value        string   // put, cas: the value written
	expect       register // cas: what the key must hold for the write
	serializable bool
}

// answer is what etcd answered; known is false for a write without an answer, which may or may not have applied.
type answer struct {
	known     bool
	value     register // get
	succeeded bool     // cas
}

// kvModel is a register per key, starting in the given state: porcupine checks each key's operations on their
// own (a history of single-key operations is linearizable iff each key's is), which keeps its search small.
func kvModel(initial keyState) porcupine.Model {
	return porcupine.Model{
		Partition: partitionByKey,
		Init:      func() interface{} { return initial },
		Step: func(state, in, out interface{}) (bool, interface{}) {
			return step(state.(keyState), in.(input), out.(answer))
		},
		Hash: func(state interface{}) uint64 {
			s := state.(keyState)
			h := fnv.New64a()
			h.Write([]byte{boolByte(s.known), boolByte(s.present)})
			h.Write([]byte(s.value))
			return h.Sum64()
		},
		DescribeOperation: func(in, out interface{}) string {
			return describeOperation(in.(input), out.(answer))
		},
		DescribeState: func(state interface{}) string {
			return describeState(state.(keyState))
		},
		DescribeOperationMetadata: func(metadata interface{}) string {
			if metadata == nil {
				return ""
			}
			return metadata.(operationMetadata).text
		},
	}
}

// operationMetadata rides along each checked operation: where it is in the history, what the visualisation
// shows of it beyond its description, and for an unanswered write given a return (settle.go), the operation whose
// return it took.
type operationMetadata struct {
	index     int
	text      string
	bounded   bool
	boundedBy int
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// step is the sequential specification of one key. A write without an answer is always possible: porcupine
// places it where it fits, or after everything else, where it changes nothing anyone saw.
//
// From an unknown state every operation is possible, and the state becomes known once one tells it (a read, a
// write, a compare-and-set that succeeded); one that does not (a failed or unanswered compare-and-set) leaves it
// unknown, which is weaker than the truth and so never makes up an anomaly.
func step(state keyState, in input, out answer) (bool, keyState) {
	switch in.f {
	case "get":
		if !state.known {
			return true, keyState{known: true, register: out.value}
		}
		return out.value == state.register, state
	case "put":
		return true, keyState{known: true, register: holding(in.value)}
	case "delete":
		return true, startsAbsent
	case "cas":
		return stepCompareAndSet(state, in, out)
	}
	panic("unknown operation " + in.f) // parseInput lets none through
}

func stepCompareAndSet(state keyState, in input, out answer) (bool, keyState) {
	written := keyState{known: true, register: holding(in.value)}
	if !state.known {
		if out.known && out.succeeded {
			return true, written
		}
		return true, state
	}
	matches := state.register == in.expect
	if out.known && out.succeeded != matches {
		return false, state
	}
	if matches {
		return true, written
	}
	return true, state
}

// partitionByKey groups operations by key, keys in the order of their first operation (deterministic, so that
// partition i of porcupine's answer is keysOf(history)[i]).
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	index := map[string]int{}
	var partitions [][]porcupine.Operation
	for _, op := range history {
		key := op.Input.(input).key
		i, seen := index[key]
		if !seen {
			i = len(partitions)
			index[key] = i
			partitions = append(partitions, nil)
		}
		partitions[i] = append(partitions[i], op)
	}
	return partitions
}

func describeOperation(in input, out answer) string {
	var call string
	switch in.f {
	case "get":
		call = fmt.Sprintf("get(%s)", in.key)
	case "put":
		call = fmt.Sprintf("put(%s, %s)", in.key, quoted(in.value))
	case "delete":
		call = fmt.Sprintf("delete(%s)", in.key)
	case "cas":
		call = fmt.Sprintf("cas(%s, %s -> %s)", in.key, describeRegister(in.expect), quoted(in.value))
	}
	switch {
	case !out.known:
		return call + " -> ?"
	case in.f == "get":
		return call + " -> " + describeRegister(out.value)
	case in.f == "cas":
		return fmt.Sprintf("%s -> %t", call, out.succeeded)
	}
	return call
}

func describeState(s keyState) string {
	if !s.known {
		return "any"
	}
	return describeRegister(s.register)
}

func describeRegister(r register) string {
	if !r.present {
		return "absent"
	}
	return quoted(r.value)
}

// quoted shortens long values: the visualisation shows a box per operation, and writers' values are often long.
func quoted(value string) string {
	const longest = 32
	if runes := []rune(value); len(runes) > longest {
		value = string(runes[:longest]) + "…"
	}
	return fmt.Sprintf("%q", value)
}
