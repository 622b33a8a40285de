// checker: is a recorded history of etcd clients linearizable? The history is what test/support/history.ts
// describes (every get, put, delete and compare-and-set with its call and return times and its outcome); the
// search for a linearization is porcupine's (github.com/anishathalye/porcupine), over a model of one register per
// key.
//
// Left out of the check: serializable reads (answered by one member from its own store, stale by design), reads
// without an answer, and writes that certainly failed. A write without an answer is kept, as possibly applied at
// any time after its call, or never (it may be linearized after everything else), as Jepsen and etcd's own
// robustness tests treat it. Before the search, such writes are settled where the values tell how (settle.go):
// that changes no verdict, and spares porcupine most of them; they still count as checked.
//
// Prints one JSON object (Verdict in history.ts): the result (ok, illegal, or unknown when the time ran out), the
// counts, and for an anomaly the smallest part found of each illegal key's operations that still shows it.
// Exit status 0 whenever the check ran, whatever it found; 2 on bad usage or a bad history; 1 when the
// visualisation cannot be written.
//
//	checker --history FILE [--visualize FILE.html] [--timeout 60s] [--shrink-time 20s]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

const (
	exitChecked  = 0
	exitFailed   = 1
	exitBadInput = 2
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("checker", flag.ContinueOnError)
	flags.SetOutput(stderr)
	historyPath := flags.String("history", "", "the history, JSON as test/support/history.ts describes it (- for stdin)")
	visualize := flags.String("visualize", "", "write porcupine's HTML visualisation of the check here")
	timeout := flags.Duration("timeout", 60*time.Second, "for porcupine's check of the whole history (0: none); past it the result is unknown")
	shrinkTime := flags.Duration("shrink-time", 20*time.Second, "for shrinking the anomalies of an illegal history to small parts")
	if err := flags.Parse(args); err != nil {
		return exitBadInput
	}
	if *historyPath == "" || flags.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: checker --history FILE [--visualize FILE.html] [--timeout 60s] [--shrink-time 20s]")
		return exitBadInput
	}
	history, err := readHistoryFrom(*historyPath, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "checker: %s: %v\n", *historyPath, err)
		return exitBadInput
	}
	v, err := check(history, options{timeout: *timeout, shrinkTime: *shrinkTime, visualize: *visualize})
	if err != nil {
		fmt.Fprintf(stderr, "checker: %v\n", err)
		return exitFailed
	}
	if err := json.NewEncoder(stdout).Encode(v); err != nil {
		fmt.Fprintf(stderr, "checker: %v\n", err)
		return exitFailed
	}
	return exitChecked
}

func readHistoryFrom(path string, stdin io.Reader) ([]recorded, error) {
	if path == "-" {
		return readHistory(stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readHistory(f)
}
