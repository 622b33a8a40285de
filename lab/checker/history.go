package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/anishathalye/porcupine"
)

// The history file, as test/support/history.ts writes it. Each operation is kept as its raw JSON too, so that an
// anomaly is reported in exactly the form the caller wrote.
type historyFile struct {
	Operations []json.RawMessage `json:"operations"`
}

type operationJSON struct {
	Client *int         `json:"client"`
	Input  inputJSON    `json:"input"`
	Call   *json.Number `json:"call"`
	Return *json.Number `json:"return"` // null: no answer
	Out    outcomeJSON  `json:"outcome"`
}

type inputJSON struct {
	F            string         `json:"f"`
	Key          *string        `json:"key"`
	Value        nullableString `json:"value"`
	Expect       nullableString `json:"expect"`
	Serializable bool           `json:"serializable"`
}

type outcomeJSON struct {
	Type      string         `json:"type"`
	Value     nullableString `json:"value"`
	Succeeded *bool          `json:"succeeded"`
	Revision  int64          `json:"revision"`
	Error     string         `json:"error"`
}

// nullableString tells a field that is absent from one that is null: a get's answer and a compare-and-set's
// expectation use null for "the key is absent", and a missing one is a recorder's bug, not an absent key.
type nullableString struct {
	given bool
	value register
}

func (s *nullableString) UnmarshalJSON(data []byte) error {
	s.given = true
	if bytes.Equal(data, []byte("null")) {
		s.value = absent
		return nil
	}
	var v string
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	s.value = holding(v)
	return nil
}

// A recorded operation: the raw JSON, and what porcupine checks, when it is checked at all.
type recorded struct {
	raw     json.RawMessage
	checked bool
	op      porcupine.Operation
}

// unknownReturn is the completion time of a write without an answer: later than every other, so that porcupine
// may place it anywhere after its call, after everything else included (never applied).
const unknownReturn = math.MaxInt64

func readHistory(r io.Reader) ([]recorded, error) {
	var file historyFile
	if err := json.NewDecoder(r).Decode(&file); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if file.Operations == nil {
		return nil, errors.New(`history: no "operations" array`)
	}
	ops := make([]recorded, 0, len(file.Operations))
	for i, raw := range file.Operations {
		op, err := parseOperation(i, raw)
		if err != nil {
			return nil, fmt.Errorf("operation %d: %w", i, err)
		}
		ops = append(ops, op)
	}
	denseClientIDs(ops)
	return ops, nil
}

func parseOperation(index int, raw json.RawMessage) (recorded, error) {
	var j operationJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return recorded{}, err
	}
	if j.Client == nil || j.Input.Key == nil || j.Call == nil {
		return recorded{}, errors.New("client, input.key and call are required")
	}
	in, err := parseInput(j.Input)
	if err != nil {
		return recorded{}, err
	}
	call, err := nanoseconds(*j.Call)
	if err != nil {
		return recorded{}, fmt.Errorf("call: %w", err)
	}
	rec := recorded{raw: raw}
	rec.op = porcupine.Operation{ClientId: *j.Client, Input: in, Call: call}
	switch j.Out.Type {
	case "ok":
		out, err := parseAnswer(in, j.Out)
		if err != nil {
			return recorded{}, err
		}
		if j.Return == nil {
			return recorded{}, errors.New("an ok outcome needs a return time")
		}
		if rec.op.Return, err = nanoseconds(*j.Return); err != nil {
			return recorded{}, fmt.Errorf("return: %w", err)
		}
		if rec.op.Return < call {
			return recorded{}, fmt.Errorf("returned (%d) before its call (%d)", rec.op.Return, call)
		}
		rec.op.Output = out
		rec.op.Metadata = operationMetadata{index: index, text: fmt.Sprintf("client %d, revision %d", *j.Client, j.Out.Revision)}
		// A serializable read is answered by one member from its own store, which may lag: not linearizable by design.
		rec.checked = !in.serializable
	case "fail":
		// Certainly not applied (a write), or no answer to check (a read): constrains nothing.
		rec.checked = false
	case "unknown":
		// A read without an answer constrains nothing; a write may have been applied at any time after its call.
		rec.checked = in.f != "get"
		rec.op.Return = unknownReturn
		rec.op.Output = answer{known: false}
		rec.op.Metadata = operationMetadata{index: index, text: fmt.Sprintf("client %d, no answer: %s", *j.Client, j.Out.Error)}
	default:
		return recorded{}, fmt.Errorf("outcome.type %q: not ok, fail or unknown", j.Out.Type)
	}
	return rec, nil
}

func parseInput(j inputJSON) (input, error) {
	in := input{f: j.F, key: *j.Key, serializable: j.Serializable}
	switch j.F {
	case "get":
	case "delete":
	case "put":
		if !j.Value.given || j.Value.value == absent {
			return input{}, errors.New("a put needs a string value")
		}
		in.value = j.Value.value.value
	case "cas":
		if !j.Value.given || j.Value.value == absent || !j.Expect.given {
			return input{}, errors.New("a cas needs a string value and an expect (a string, or null for absent)")
		}
		in.value = j.Value.value.value
		in.expect = j.Expect.value
	default:
		return input{}, fmt.Errorf("input.f %q: not get, put, delete or cas", j.F)
	}
	if j.Serializable && j.F != "get" {
		return input{}, errors.New("only a get can be serializable")
	}
	return in, nil
}

// What etcd answered: a get's value, a compare-and-set's success; a put or delete answers nothing more.
func parseAnswer(in input, j outcomeJSON) (answer, error) {
	out := answer{known: true}
	switch in.f {
	case "get":
		if !j.Value.given {
			return answer{}, errors.New("an ok get needs outcome.value (null for an absent key)")
		}
		out.value = j.Value.value
	case "cas":
		if j.Succeeded == nil {
			return answer{}, errors.New("an ok cas needs outcome.succeeded")
		}
		out.succeeded = *j.Succeeded
	}
	return out, nil
}

// Times are nanoseconds from the recording's start, integers; but a recorder that scales a fractional clock
// (performance.now() * 1e6) writes fractions: those are rounded, a sub-nanosecond difference orders nothing.
func nanoseconds(n json.Number) (int64, error) {
	bad := fmt.Errorf("%s: not a time in nanoseconds from the start", n)
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || f >= unknownReturn {
			return 0, bad
		}
		i = int64(math.Round(f))
	}
	if i < 0 || i >= unknownReturn {
		return 0, bad
	}
	return i, nil
}

// Porcupine's visualisation draws client n on row n, and a write without an answer overlaps the rest of its
// client's row (its return is at infinity): recorded clients get the first rows in their order, and each write
// without an answer a row of its own below them (its metadata names its client).
func denseClientIDs(ops []recorded) {
	clients := map[int]int{}
	sorted := []int{}
	for _, r := range ops {
		if _, seen := clients[r.op.ClientId]; !seen {
			clients[r.op.ClientId] = 0
			sorted = append(sorted, r.op.ClientId)
		}
	}
	slices.Sort(sorted)
	for row, client := range sorted {
		clients[client] = row
	}
	extraRow := len(sorted)
	for i := range ops {
		if ops[i].checked && ops[i].op.Return == unknownReturn {
			ops[i].op.ClientId = extraRow
			extraRow++
			continue
		}
		ops[i].op.ClientId = clients[ops[i].op.ClientId]
	}
}
