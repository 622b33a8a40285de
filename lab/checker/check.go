package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

type options struct {
	timeout    time.Duration // of porcupine's check of the whole history; 0: none
	shrinkTime time.Duration // for shrinking all anomalies together
	visualize  string        // where to write porcupine's visualisation; "": nowhere
}

// verdict is the checker's answer (test/support/history.ts, Verdict).
type verdict struct {
	Result        string    `json:"result"` // ok, illegal or unknown (timed out)
	Operations    int       `json:"operations"`
	Checked       int       `json:"checked"`
	Anomalies     []anomaly `json:"anomalies,omitempty"`
	Visualization string    `json:"visualization,omitempty"`
}

// anomaly is a key whose operations cannot be linearized, with the smallest part of them found that shows it,
// each as the history file had it.
type anomaly struct {
	Key        string            `json:"key"`
	Operations []json.RawMessage `json:"operations"`
}

func check(history []recorded, opts options) (verdict, error) {
	checked := checkedOperations(history)
	ops := settleUnanswered(checked)
	model := kvModel(startsAbsent)
	started := time.Now()
	result, info := porcupine.CheckOperationsVerbose(model, ops, opts.timeout)
	timedOut := opts.timeout > 0 && time.Since(started) >= opts.timeout
	v := verdict{Result: strings.ToLower(string(result)), Operations: len(history), Checked: len(checked)}
	if result == porcupine.Illegal {
		illegal := illegalPartitions(ops, info, timedOut, opts.timeout)
		v.Anomalies = shrinkAnomalies(history, illegal, opts.shrinkTime)
	}
	if opts.visualize != "" {
		if err := porcupine.VisualizePath(model, info, opts.visualize); err != nil {
			return v, fmt.Errorf("writing the visualization: %w", err)
		}
		v.Visualization = opts.visualize
	}
	return v, nil
}

func checkedOperations(history []recorded) []porcupine.Operation {
	var ops []porcupine.Operation
	for _, r := range history {
		if r.checked {
			ops = append(ops, r.op)
		}
	}
	return ops
}

// illegalPartitions picks the keys porcupine could not linearize: those without a complete linearization among
// its partial ones. When the check timed out, a key whose search it cut short has none either, and is checked
// again on its own, for a proof, all of them within one more timeout (one that finds none leaves an illegal
// verdict without anomalies: porcupine proved some key illegal, but does not say which).
func illegalPartitions(ops []porcupine.Operation, info porcupine.LinearizationInfo, timedOut bool, timeout time.Duration) [][]porcupine.Operation {
	partials := info.PartialLinearizations()
	deadline := time.Now().Add(timeout)
	var illegal [][]porcupine.Operation
	for i, partition := range partitionByKey(ops) {
		if i < len(partials) && linearizedWhole(partials[i], len(partition)) {
			continue
		}
		if timedOut && !provedIllegal(partition, deadline) {
			continue
		}
		illegal = append(illegal, partition)
	}
	return illegal
}

func provedIllegal(partition []porcupine.Operation, deadline time.Time) bool {
	remaining := time.Until(deadline)
	return remaining > 0 && porcupine.CheckOperationsTimeout(kvModel(startsAbsent), partition, remaining) == porcupine.Illegal
}

func linearizedWhole(partials [][]int, operations int) bool {
	return slices.ContainsFunc(partials, func(p []int) bool { return len(p) == operations })
}

// shrinkAnomalies shrinks each illegal key's operations, sharing the time among the keys left.
func shrinkAnomalies(history []recorded, illegal [][]porcupine.Operation, budget time.Duration) []anomaly {
	deadline := time.Now().Add(budget)
	anomalies := make([]anomaly, 0, len(illegal))
	for i, ops := range illegal {
		share := time.Until(deadline) / time.Duration(len(illegal)-i)
		kept := shrink(ops, time.Now().Add(share))
		anomalies = append(anomalies, anomaly{Key: kept[0].Input.(input).key, Operations: asRecorded(history, kept)})
	}
	return anomalies
}

// asRecorded gives operations back as the history file had them, in its order, with the operation that bounded
// an unanswered write among them (settle.go): without it, the part might not show the anomaly on its own.
func asRecorded(history []recorded, ops []porcupine.Operation) []json.RawMessage {
	indexes := make([]int, 0, len(ops))
	for _, op := range ops {
		meta := op.Metadata.(operationMetadata)
		indexes = append(indexes, meta.index)
		if meta.bounded {
			indexes = append(indexes, meta.boundedBy)
		}
	}
	slices.Sort(indexes)
	indexes = slices.Compact(indexes)
	raws := make([]json.RawMessage, 0, len(indexes))
	for _, i := range indexes {
		raws = append(raws, history[i].raw)
	}
	return raws
}
