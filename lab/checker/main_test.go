package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Histories are written as test/support/history.ts writes them and checked through the command's own entry.

type testOperation struct {
	Client  int            `json:"client"`
	Input   map[string]any `json:"input"`
	Call    int64          `json:"call"`
	Return  *int64         `json:"return"`
	Outcome map[string]any `json:"outcome"`
}

type testVerdict struct {
	Result     string `json:"result"`
	Operations int    `json:"operations"`
	Checked    int    `json:"checked"`
	Anomalies  []struct {
		Key        string          `json:"key"`
		Operations []testOperation `json:"operations"`
	} `json:"anomalies"`
	Visualization string `json:"visualization"`
}

// nullable: nil is JSON null (an absent key).
func nullable(value *string) any {
	if value == nil {
		return nil
	}
	return *value
}

func str(s string) *string { return &s }

func answered(client int, input map[string]any, call, ret int64, outcome map[string]any) testOperation {
	outcome["type"] = "ok"
	outcome["revision"] = 1
	return testOperation{Client: client, Input: input, Call: call, Return: &ret, Outcome: outcome}
}

func get(client int, key string, call, ret int64, value *string) testOperation {
	return answered(client, map[string]any{"f": "get", "key": key}, call, ret, map[string]any{"value": nullable(value)})
}

func serializableGet(client int, key string, call, ret int64, value *string) testOperation {
	op := get(client, key, call, ret, value)
	op.Input["serializable"] = true
	return op
}

func put(client int, key, value string, call, ret int64) testOperation {
	return answered(client, map[string]any{"f": "put", "key": key, "value": value}, call, ret, map[string]any{})
}

func del(client int, key string, call, ret int64) testOperation {
	return answered(client, map[string]any{"f": "delete", "key": key}, call, ret, map[string]any{})
}

func cas(client int, key string, expect *string, value string, call, ret int64, succeeded bool) testOperation {
	in := map[string]any{"f": "cas", "key": key, "expect": nullable(expect), "value": value}
	return answered(client, in, call, ret, map[string]any{"succeeded": succeeded})
}

func unanswered(op testOperation) testOperation {
	op.Return = nil
	op.Outcome = map[string]any{"type": "unknown", "error": "deadline exceeded"}
	return op
}

func failed(op testOperation) testOperation {
	op.Outcome = map[string]any{"type": "fail", "error": "connection refused"}
	return op
}

func checkOperations(t *testing.T, extraArgs []string, ops ...testOperation) testVerdict {
	t.Helper()
	data, err := json.Marshal(map[string]any{"operations": ops})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"--history", path}, extraArgs...), nil, &stdout, &stderr); code != exitChecked {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var v testVerdict
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	return v
}

func expectResult(t *testing.T, v testVerdict, result string, operations, checked int) {
	t.Helper()
	if v.Result != result || v.Operations != operations || v.Checked != checked {
		t.Fatalf("got %s, %d operations, %d checked; want %s, %d, %d", v.Result, v.Operations, v.Checked, result, operations, checked)
	}
	if (result == "illegal") != (len(v.Anomalies) > 0) {
		t.Fatalf("%s with %d anomalies", v.Result, len(v.Anomalies))
	}
}

func TestLinearHistoryIsOk(t *testing.T) {
	v := checkOperations(t, nil,
		get(0, "a", 0, 5, nil),
		put(0, "a", "1", 10, 20),
		get(1, "a", 25, 30, str("1")),
		put(0, "a", "2", 40, 60),
		get(1, "a", 45, 50, str("1")), // concurrent with the put: either value
		get(1, "a", 52, 55, str("2")),
		get(2, "b", 52, 55, nil),
		del(0, "a", 70, 80),
		get(1, "a", 90, 95, nil),
		cas(0, "a", nil, "3", 100, 110, true),
		cas(1, "a", str("1"), "4", 105, 115, false),
		cas(2, "a", str("3"), "5", 120, 130, true),
		get(1, "a", 140, 150, str("5")),
	)
	expectResult(t, v, "ok", 13, 13)
}

func TestLostAcknowledgedWriteIsIllegal(t *testing.T) {
	v := checkOperations(t, nil,
		put(0, "a", "1", 0, 10),
		put(0, "a", "2", 20, 30),
		get(1, "a", 40, 50, str("1")), // called after the put of 2 returned
	)
	expectResult(t, v, "illegal", 3, 3)
	if v.Anomalies[0].Key != "a" {
		t.Fatalf("anomaly on %q", v.Anomalies[0].Key)
	}
}

func TestCompareAndSetSucceedingTwiceOnOneValueIsIllegal(t *testing.T) {
	v := checkOperations(t, nil,
		put(0, "a", "0", 0, 10),
		cas(1, "a", str("0"), "1", 20, 30, true),
		cas(2, "a", str("0"), "2", 25, 40, true),
	)
	expectResult(t, v, "illegal", 3, 3)
}

func TestUnansweredWrites(t *testing.T) {
	t.Run("shows up in a later read", func(t *testing.T) {
		v := checkOperations(t, nil,
			put(0, "a", "1", 0, 10),
			unanswered(put(1, "a", "2", 20, 0)),
			get(2, "a", 30, 40, str("1")),
			get(2, "a", 100, 110, str("2")),
		)
		expectResult(t, v, "ok", 4, 4)
	})
	t.Run("never shows", func(t *testing.T) {
		v := checkOperations(t, nil,
			put(0, "a", "1", 0, 10),
			unanswered(put(1, "a", "2", 20, 0)),
			unanswered(cas(1, "a", str("1"), "3", 30, 0, false)),
			get(2, "a", 100, 110, str("1")),
			get(2, "a", 200, 210, str("1")),
		)
		expectResult(t, v, "ok", 5, 5)
	})
	t.Run("shows up, then is gone", func(t *testing.T) {
		v := checkOperations(t, nil,
			put(0, "a", "1", 0, 10),
			unanswered(put(1, "a", "2", 20, 0)),
			get(2, "a", 100, 110, str("2")),
			get(2, "a", 200, 210, str("1")),
		)
		expectResult(t, v, "illegal", 4, 4)
	})
	t.Run("an unanswered read is left out", func(t *testing.T) {
		v := checkOperations(t, nil,
			put(0, "a", "1", 0, 10),
			unanswered(get(2, "a", 100, 110, nil)),
		)
		expectResult(t, v, "ok", 2, 1)
	})
}

func TestFailedOperationsAreLeftOut(t *testing.T) {
	v := checkOperations(t, nil,
		put(0, "a", "1", 0, 10),
		failed(put(1, "a", "2", 20, 30)),
		failed(get(1, "a", 40, 50, nil)),
		get(2, "a", 100, 110, str("1")),
	)
	expectResult(t, v, "ok", 4, 2)
	// A write reported failed that took effect all the same is an anomaly.
	v = checkOperations(t, nil,
		put(0, "a", "1", 0, 10),
		failed(put(1, "a", "2", 20, 30)),
		get(2, "a", 100, 110, str("2")),
	)
	expectResult(t, v, "illegal", 3, 2)
}

func TestStaleReadIsAnAnomalyOnlyWhenLinearizable(t *testing.T) {
	writes := []testOperation{put(0, "a", "1", 0, 10), put(0, "a", "2", 20, 30)}
	v := checkOperations(t, nil, append(writes, serializableGet(1, "a", 40, 50, str("1")))...)
	expectResult(t, v, "ok", 3, 2)
	v = checkOperations(t, nil, append(writes, get(1, "a", 40, 50, str("1")))...)
	expectResult(t, v, "illegal", 3, 3)
}

// A long history of one writer and one reader, plus a second key, with one stale read deep inside, and a write
// without an answer early on that a failed compare-and-set may have noticed (so it is checked, in flight for
// ever): the anomaly shrinks to the put the read missed, the read, and that write, which no cut can drop; that
// part alone is illegal.
func TestShrinkingKeepsAnIllegalPart(t *testing.T) {
	var ops []testOperation
	for i := range int64(100) {
		t0 := i * 100
		value := fmt.Sprintf("v%d", i)
		seen := value
		if i == 50 {
			seen = "v48"
		}
		ops = append(ops,
			put(0, "a", value, t0, t0+10),
			get(1, "a", t0+20, t0+30, str(seen)),
			put(2, "b", value, t0+5, t0+25),
			get(3, "b", t0+15, t0+35, str(value)), // concurrent with b's put
		)
	}
	ops = append(ops,
		unanswered(put(4, "a", "lost", 1, 0)),
		cas(4, "a", str("v3"), "never", 340, 360, false), // a put of v3 returned at 310, a read saw it at 330
	)
	v := checkOperations(t, nil, ops...)
	expectResult(t, v, "illegal", 402, 402)
	if len(v.Anomalies) != 1 || v.Anomalies[0].Key != "a" {
		t.Fatalf("anomalies: %+v", v.Anomalies)
	}
	part := v.Anomalies[0].Operations
	// The unanswered write the failed compare-and-set could have noticed goes with it: nothing left notices it.
	if len(part) != 2 || part[0].Input["value"] != "v50" || part[1].Outcome["value"] != "v48" {
		t.Fatalf("shrunk to %+v", part)
	}
	expectResult(t, checkOperations(t, nil, part...), "illegal", 2, 2)
	// With the read made right, the history is linearizable thanks to the unanswered write only.
	fixed := slices.Clone(ops)
	fixed[50*4+1] = get(1, "a", 5020, 5030, str("v50"))
	expectResult(t, checkOperations(t, nil, fixed...), "ok", 402, 402)
	expectResult(t, checkOperations(t, nil, slices.Delete(fixed, 400, 401)...), "illegal", 401, 401)
}

// Dropping the put whose value a read returned would leave a read of a value nobody wrote, illegal on its own:
// the shrinking never makes up such an anomaly.
func TestShrinkingKeepsWhatTheReadMissed(t *testing.T) {
	v := checkOperations(t, nil,
		put(0, "a", "1", 0, 10),
		unanswered(put(1, "a", "2", 5, 0)), // nobody sees it: left out, so it blocks no cut
		put(0, "a", "3", 20, 30),
		get(1, "a", 40, 50, str("1")),
		get(2, "a", 60, 70, str("3")),
	)
	expectResult(t, v, "illegal", 5, 5)
	part := v.Anomalies[0].Operations
	if len(part) != 2 || part[0].Input["value"] != "3" || part[1].Outcome["value"] != "1" {
		t.Fatalf("shrunk to %+v", part)
	}
}

// Unanswered writes that only the failed compare-and-sets dropped from the anomaly could have noticed are not
// shown with it: the anomaly is the stale read after the last acknowledged write.
func TestShrinkingForgetsUnansweredWritesNothingLeftNotices(t *testing.T) {
	ops := []testOperation{put(0, "a", "1", 0, 10)}
	for i := range int64(6) {
		t0 := 20 + i*10
		ops = append(ops, unanswered(put(1, "a", fmt.Sprintf("u%d", i), t0, 0)), cas(2, "a", nil, fmt.Sprintf("c%d", i), t0+5, t0+8, false))
	}
	ops = append(ops, put(0, "a", "2", 100, 110), get(3, "a", 120, 130, str("1")))
	v := checkOperations(t, nil, ops...)
	expectResult(t, v, "illegal", 15, 15)
	part := v.Anomalies[0].Operations
	if len(part) != 2 || part[0].Input["value"] != "2" || part[1].Outcome["value"] != "1" {
		t.Fatalf("shrunk to %+v", part)
	}
}

// An unanswered write whose value a read saw is checked as applied before that read returned; an anomaly that
// needs that bound shows the read too, even when the shrinking found the rest illegal without it.
func TestSeenUnansweredWriteKeepsItsWitness(t *testing.T) {
	v := checkOperations(t, nil,
		put(0, "a", "1", 0, 10),
		unanswered(put(1, "a", "2", 15, 0)),
		get(2, "a", 16, 18, str("1")), // before the write took effect: not needed
		get(2, "a", 20, 30, str("2")),
		get(2, "a", 40, 50, str("1")), // the write was applied by 30: 1 is gone
	)
	expectResult(t, v, "illegal", 5, 5)
	part := v.Anomalies[0].Operations
	if len(part) != 3 || part[0].Return != nil || part[1].Outcome["value"] != "2" || part[2].Outcome["value"] != "1" {
		t.Fatalf("shrunk to %+v", part)
	}
	expectResult(t, checkOperations(t, nil, part...), "illegal", 3, 3)
	// Without the read that saw it, the write may not have happened yet: no anomaly.
	expectResult(t, checkOperations(t, nil, put(0, "a", "1", 0, 10), part[0], part[2]), "ok", 3, 3)
}

// A compare-and-set that answered false may have noticed an unanswered write nobody read: that write counts.
func TestUnansweredWriteNoticedByAFailedCompareAndSet(t *testing.T) {
	v := checkOperations(t, nil,
		put(0, "a", "1", 0, 10),
		unanswered(put(1, "a", "2", 5, 0)),
		cas(2, "a", str("1"), "3", 20, 30, false),
	)
	expectResult(t, v, "ok", 3, 3)
}

// Settling unanswered writes (settle.go) changes no verdict: small random histories, many of them illegal, with
// repeated values and unanswered writes, get the same answer from porcupine before and after.
func TestSettlingChangesNoVerdict(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	verdicts, rewritten := map[bool]int{}, 0
	for range 3000 {
		ops := randomOperations(rng, 2+rng.IntN(9))
		settledOps := settleUnanswered(ops)
		raw := porcupine.CheckOperations(kvModel(startsAbsent), ops)
		if settled := porcupine.CheckOperations(kvModel(startsAbsent), settledOps); raw != settled {
			t.Fatalf("linearizable %t, settled %t: %s\nsettled:%s", raw, settled, describeAll(ops), describeAll(settledOps))
		}
		verdicts[raw]++
		if describeAll(settledOps) != describeAll(ops) {
			rewritten++
		}
	}
	if verdicts[true] < 300 || verdicts[false] < 300 || rewritten < 300 {
		t.Fatalf("too few cases to tell: verdicts %v, %d rewritten", verdicts, rewritten)
	}
}

// Every anomaly reported is one: the part, checked on its own, is illegal too.
func TestShrunkPartsAreIllegalOnTheirOwn(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	anomalies := 0
	for range 300 {
		history := randomHistory(rng, 4+rng.IntN(12))
		v, err := check(history, options{timeout: 10 * time.Second, shrinkTime: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if v.Result != "illegal" {
			continue
		}
		part, err := readHistory(bytes.NewReader(mustJSON(t, map[string]any{"operations": v.Anomalies[0].Operations})))
		if err != nil {
			t.Fatal(err)
		}
		if porcupine.CheckOperations(kvModel(startsAbsent), checkedOperations(history)) {
			t.Fatal("an illegal verdict on a linearizable history")
		}
		if porcupine.CheckOperations(kvModel(startsAbsent), checkedOperations(part)) {
			t.Fatalf("the part shown is linearizable: %s", describeAll(checkedOperations(part)))
		}
		anomalies++
	}
	if anomalies < 50 {
		t.Fatalf("only %d anomalies to tell", anomalies)
	}
}

// A long history of a linearizable store under eight clients, one read in the middle made stale, with unanswered
// writes: proved illegal well within the time (unsettled, porcupine ran out of a minute on such histories).
func TestLongHistoryWithUnansweredWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ops := linearizableLoad(rng, 8, 8000)
	v := checkOperations(t, []string{"--timeout", "30s"}, ops...)
	expectResult(t, v, "ok", len(ops), len(ops))
	for i := len(ops) / 2; ; i++ {
		if ops[i].Input["f"] == "get" && ops[i].Outcome["type"] == "ok" && ops[i].Outcome["value"] != nil {
			ops[i].Outcome["value"] = "never written"
			break
		}
	}
	v = checkOperations(t, []string{"--timeout", "30s"}, ops...)
	expectResult(t, v, "illegal", len(ops), len(ops))
	if len(v.Anomalies[0].Operations) > 10 {
		t.Fatalf("shrunk to %d operations", len(v.Anomalies[0].Operations))
	}
}

func TestVisualization(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.html")
	v := checkOperations(t, []string{"--visualize", path, "--timeout", "10s"},
		put(0, "a", "1", 0, 10),
		unanswered(put(1, "a", "2", 5, 0)),
		get(1, "a", 40, 50, str("3")),
	)
	expectResult(t, v, "illegal", 3, 3)
	if v.Visualization != path {
		t.Fatalf("visualization %q", v.Visualization)
	}
	html, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(html, []byte(`get(a) -\u003e \"3\"`)) && !bytes.Contains(html, []byte(`get(a) -> \"3\"`)) {
		t.Fatalf("visualization without the read (%v)", err)
	}
}

func TestBadInput(t *testing.T) {
	for name, history := range map[string]string{
		"not JSON":             `{"operations": [`,
		"no operations":        `{}`,
		"unknown function":     `{"operations": [{"client": 0, "input": {"f": "inc", "key": "a"}, "call": 0, "return": 1, "outcome": {"type": "ok", "revision": 1}}]}`,
		"get without a value":  `{"operations": [{"client": 0, "input": {"f": "get", "key": "a"}, "call": 0, "return": 1, "outcome": {"type": "ok", "revision": 1}}]}`,
		"cas without expect":   `{"operations": [{"client": 0, "input": {"f": "cas", "key": "a", "value": "1"}, "call": 0, "return": 1, "outcome": {"type": "ok", "succeeded": true, "revision": 1}}]}`,
		"ok without a return":  `{"operations": [{"client": 0, "input": {"f": "put", "key": "a", "value": "1"}, "call": 0, "return": null, "outcome": {"type": "ok", "revision": 1}}]}`,
		"return before call":   `{"operations": [{"client": 0, "input": {"f": "put", "key": "a", "value": "1"}, "call": 5, "return": 1, "outcome": {"type": "ok", "revision": 1}}]}`,
		"unknown outcome type": `{"operations": [{"client": 0, "input": {"f": "delete", "key": "a"}, "call": 0, "return": 1, "outcome": {"type": "maybe"}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"--history", "-"}, bytes.NewBufferString(history), &stdout, &stderr); code != exitBadInput {
				t.Fatalf("exit %d, stdout %s", code, stdout.String())
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run(nil, nil, &stdout, &stderr); code != exitBadInput {
		t.Fatalf("no --history: exit %d", code)
	}
}

func TestFractionalNanosecondsAndNullExpect(t *testing.T) {
	history := `{"operations": [
	  {"client": 3, "input": {"f": "cas", "key": "k", "expect": null, "value": "x"}, "call": 0.5, "return": 10.25, "outcome": {"type": "ok", "succeeded": true, "revision": 2}},
	  {"client": 7, "input": {"f": "get", "key": "k"}, "call": 20, "return": 30, "outcome": {"type": "ok", "value": "x", "revision": 2}}
	]}`
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--history", "-"}, bytes.NewBufferString(history), &stdout, &stderr); code != exitChecked {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var v testVerdict
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	expectResult(t, v, "ok", 2, 2)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func describeAll(ops []porcupine.Operation) string {
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "\n  [%d, %d] %s", op.Call, op.Return, describeOperation(op.Input.(input), op.Output.(answer)))
	}
	return b.String()
}

// randomOperations: one key, values from a small set (so that some repeat), any answers, some unanswered writes.
func randomOperations(rng *rand.Rand, n int) []porcupine.Operation {
	return checkedOperations(randomHistory(rng, n))
}

func randomHistory(rng *rand.Rand, n int) []recorded {
	values := []register{absent, holding("1"), holding("2"), holding("3")}
	someValue := func() string { return values[1+rng.IntN(3)].value }
	history := make([]recorded, n)
	for i := range history {
		call := int64(rng.IntN(100))
		in := input{f: []string{"get", "put", "delete", "cas"}[rng.IntN(4)], key: "k"}
		out := answer{known: true}
		switch in.f {
		case "get":
			out.value = values[rng.IntN(len(values))]
		case "put":
			in.value = someValue()
		case "cas":
			in.value, in.expect, out.succeeded = someValue(), values[rng.IntN(len(values))], rng.IntN(2) == 0
		}
		ret := call + int64(rng.IntN(30))
		if in.f != "get" && rng.IntN(3) == 0 {
			out, ret = answer{}, unknownReturn
		}
		op := porcupine.Operation{ClientId: i, Input: in, Call: call, Output: out, Return: ret, Metadata: operationMetadata{index: i}}
		history[i] = recorded{raw: asJSON(op), checked: true, op: op}
	}
	return history
}

// asJSON writes an operation as history.ts has it.
func asJSON(op porcupine.Operation) json.RawMessage {
	in, out := op.Input.(input), op.Output.(answer)
	registerJSON := func(r register) any {
		if !r.present {
			return nil
		}
		return r.value
	}
	jsonIn := map[string]any{"f": in.f, "key": in.key}
	if in.f == "put" || in.f == "cas" {
		jsonIn["value"] = in.value
	}
	if in.f == "cas" {
		jsonIn["expect"] = registerJSON(in.expect)
	}
	var ret any = op.Return
	outcome := map[string]any{"type": "ok", "revision": 1}
	switch {
	case !out.known:
		ret, outcome = nil, map[string]any{"type": "unknown", "error": "timeout"}
	case in.f == "get":
		outcome["value"] = registerJSON(out.value)
	case in.f == "cas":
		outcome["succeeded"] = out.succeeded
	}
	data, _ := json.Marshal(map[string]any{"client": op.ClientId, "input": jsonIn, "call": op.Call, "return": ret, "outcome": outcome})
	return data
}

// linearizableLoad: clients each doing one operation after another on a few keys of a store that applies each
// at a random moment within its interval; a twentieth of the writes get no answer, half of those applied.
func linearizableLoad(rng *rand.Rand, clients, n int) []testOperation {
	type slot struct {
		at        int64
		client    int
		call, ret int64
	}
	var slots []slot
	for c := range clients {
		t := int64(rng.IntN(100))
		for range n / clients {
			call, ret := t, t+50+int64(rng.IntN(350))
			slots = append(slots, slot{call + rng.Int64N(ret-call+1), c, call, ret})
			t = ret + 1 + int64(rng.IntN(100))
		}
	}
	slices.SortFunc(slots, func(a, b slot) int { return cmp.Compare(a.at, b.at) })
	state := map[string]*string{}
	var ops []testOperation
	for i, s := range slots {
		key := fmt.Sprintf("k%d", rng.IntN(5))
		value := fmt.Sprintf("v%d", i)
		var op testOperation
		switch r := rng.IntN(10); {
		case r < 4:
			op = get(s.client, key, s.call, s.ret, state[key])
		case r < 7:
			op = put(s.client, key, value, s.call, s.ret)
			if rng.IntN(20) == 0 {
				op = unanswered(op)
				if rng.IntN(2) == 0 {
					break
				}
			}
			state[key] = str(value)
		case r < 8:
			op = del(s.client, key, s.call, s.ret)
			state[key] = nil
		default:
			expect := state[key]
			if rng.IntN(3) == 0 {
				expect = str("stale")
			}
			succeeded := (expect == nil) == (state[key] == nil) && (expect == nil || *expect == *state[key])
			op = cas(s.client, key, expect, value, s.call, s.ret, succeeded)
			if succeeded {
				state[key] = str(value)
			}
		}
		ops = append(ops, op)
	}
	return ops
}

// Forty writes without an answer that a failed compare-and-set may have noticed, then a read of a value nobody
// wrote: porcupine would try every subset of the writes; past the timeout the result is unknown.
func TestTimeoutGivesUnknown(t *testing.T) {
	ops := []testOperation{put(0, "a", "0", 0, 10)}
	for i := range int64(40) {
		ops = append(ops, unanswered(put(int(1+i), "a", fmt.Sprintf("u%d", i), 20+i, 0)))
	}
	ops = append(ops, cas(0, "a", str("0"), "1", 100, 110, false), get(0, "a", 200, 210, str("never")))
	started := time.Now()
	v := checkOperations(t, []string{"--timeout", "200ms"}, ops...)
	expectResult(t, v, "unknown", 43, 43)
	if elapsed := time.Since(started); elapsed > 10*time.Second {
		t.Fatalf("took %v", elapsed)
	}
}
