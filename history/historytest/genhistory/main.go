// Command genhistory writes a generated history.jsonl (see historytest), for
// measuring `deadbolt check` on histories larger than any real run. It
// streams: 30M lines take a few megabytes, not the history's size.
//
//	go run ./history/historytest/genhistory -ops 1000000 -keys 100 -clients 50 -o store/big/history.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

func main() {
	var c historytest.Config
	out := flag.String("o", "", "output file (required)")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed")
	flag.IntVar(&c.Ops, "ops", 1_000_000, "history lines, at least")
	flag.IntVar(&c.Keys, "keys", 100, "lock keys")
	flag.IntVar(&c.Clients, "clients", 50, "concurrent clients")
	flag.IntVar(&c.DoubleHolds, "double-holds", 0, "double holds to plant")
	flag.DurationVar(&c.PlantedHold, "planted-hold", 0, "how long each planted double hold's victim holds (0: like the others)")
	flag.Float64Var(&c.Info, "info", 0.001, "fraction of operations with an unknown outcome")
	flag.Float64Var(&c.Renew, "renew", 0.05, "fraction of leases a watchdog renews")
	flag.Float64Var(&c.Overstay, "overstay", 0.01, "fraction of holds that outlast the TTL")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: genhistory -o FILE [flags]")
		os.Exit(254)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	enc := json.NewEncoder(w)
	n := 0
	planted := historytest.Stream(c, func(op history.Op) error {
		n++
		err = enc.Encode(op)
		return err
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, p := range planted {
		fmt.Printf("planted: key %s, leases %s and %s, both held from %s\n", p.Key, p.Victim, p.Thief, time.Duration(p.At))
	}
	fmt.Printf("%d operations written to %s\n", n, *out)
}
