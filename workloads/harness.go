package workloads

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Harness is the harness's own access to the resource, outside any lock:
// it sets the resource up before the clients start and reads it after they
// stop, recording both on history.HarnessProcess.
type Harness struct {
	Rec      *history.Recorder
	Resource *redis.Client
}

// Write records that key's data was set to value by do.
func (h *Harness) Write(ctx context.Context, key string, value int64, do func(context.Context) error) error {
	op := history.Op{Type: history.Invoke, Process: history.HarnessProcess, F: history.Write, Key: key, Value: history.Int(value)}
	h.Rec.Record(op)
	err := do(ctx)
	op.Type = history.OK
	if err != nil {
		op.Type, op.Error = history.Info, err.Error()
	}
	h.Rec.Record(op)
	return err
}

// Read records the value get reads for key. A missing value (redis.Nil)
// reads as 0.
func (h *Harness) Read(ctx context.Context, key string, get func(context.Context) (int64, error)) (int64, error) {
	op := history.Op{Type: history.Invoke, Process: history.HarnessProcess, F: history.Read, Key: key}
	h.Rec.Record(op)
	v, err := get(ctx)
	if errors.Is(err, redis.Nil) {
		v, err = 0, nil
	}
	op.Type, op.Value = history.OK, history.Int(v)
	if err != nil {
		op.Type, op.Value, op.Error = history.Info, nil, err.Error()
	}
	h.Rec.Record(op)
	return v, err
}
