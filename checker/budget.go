package checker

import (
	"context"

	"github.com/anishathalye/porcupine"
)

// The lease-lock search is bounded by work, not by the clock: a verdict
// must depend on the history alone, never on how loaded the machine was.
// Each porcupine search (one key, or one piece of a key) may take a
// number of model steps; a search that needs more is cut short and its
// key is unknown.
//
// The count is deterministic: porcupine searches one partition depth
// first in one goroutine, in an order fixed by the operations' times,
// and each search here is one partition with a counter of its own.

// DefaultModelSteps is the steps one search may take when Options leaves
// ModelSteps zero. The largest search of 112 stored runs took 18,543
// steps, of the benchmarks' histories 261, of the tests' 371,024 (a key
// built to be hard); a step costs a few microseconds, so a key that spends
// this budget is given up within seconds (docs/results/2026-11-26-budgets.md).
const DefaultModelSteps = 2_000_000

// modelSteps is the budget of one search, 0 for none.
func (o Options) modelSteps() int64 {
	switch {
	case o.ModelSteps == 0:
		return DefaultModelSteps
	case o.ModelSteps < 0:
		return 0
	}
	return o.ModelSteps
}

// stepBudget counts the steps of one search against its limit (none
// when 0). Only the search's goroutine touches it.
type stepBudget struct {
	limit int64
	taken int64
	// spent: a step was refused, so the search proves nothing.
	spent bool
}

// take charges n steps, or refuses them (and every later one) when they
// would pass the limit.
func (b *stepBudget) take(n int64) bool {
	if b.spent || (b.limit > 0 && b.taken+n > b.limit) {
		b.spent = true
		return false
	}
	b.taken += n
	return true
}

// counted is model (a power-set model, NondeterministicModel.ToModel)
// with every step charged to b. A step from a set of states costs one
// step per state, since that is the model's work: an operation of unknown
// outcome doubles the states, and a step of one key took 60µs where most
// take one. Once b is spent every step fails without stepping the model,
// so porcupine backs out of the search and ends it (as illegal, which the
// caller reads as unknown).
func counted(model porcupine.Model, b *stepBudget) porcupine.Model {
	return countedBy(model, func(any) *stepBudget { return b })
}

// countedByKey is model with each key's steps charged to that key's
// budget, for a search porcupine splits by key and runs a goroutine per
// key: a counter per key keeps each count deterministic.
func countedByKey(model porcupine.Model, budgets map[string]*stepBudget) porcupine.Model {
	return countedBy(model, func(input any) *stepBudget { return budgets[input.(*lockOp).key] })
}

func countedBy(model porcupine.Model, budgetOf func(input any) *stepBudget) porcupine.Model {
	step := model.StepContext
	model.StepContext = func(ctx context.Context, state, input, output any) (bool, any) {
		if !budgetOf(input).take(int64(len(state.([]any)))) {
			return false, nil
		}
		return step(ctx, state, input, output)
	}
	model.Step = func(state, input, output any) (bool, any) {
		return model.StepContext(context.Background(), state, input, output)
	}
	return model
}
