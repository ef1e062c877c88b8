package farm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/task"
)

// An expensive render goes on the heavy queue, an ordinary one on the interactive queue; a heavy
// task whose client leaves is deleted from the heavy queue as an ordinary one is from its own.
func TestHeavyRendersGoOnTheirOwnQueue(t *testing.T) {
	rdb := redisClient(t)
	c := farm.NewClient(rdb, 30*time.Second, farm.HeavyPixels(1000*1000))
	ins := asynq.NewInspectorFromRedisClient(rdb)
	big, small := job("lane-big"), job("lane-small")
	big.Width, big.Height = 1000, 1000
	for _, tc := range []struct {
		job          task.ExportMap
		queue, other string
	}{{big, task.QueueHeavy, task.QueueInteractive}, {small, task.QueueInteractive, task.QueueHeavy}} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := c.Export(ctx, tc.job)
			done <- err
		}()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, err := ins.GetTaskInfo(tc.queue, tc.job.ID); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("%dx%d: the task never showed up on queue %s", tc.job.Width, tc.job.Height, tc.queue)
			}
		}
		if _, err := ins.GetTaskInfo(tc.other, tc.job.ID); err == nil {
			t.Errorf("%dx%d: the task is on queue %s too", tc.job.Width, tc.job.Height, tc.other)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Export after the client left: %v, want context.Canceled", err)
		}
		if info, err := ins.GetTaskInfo(tc.queue, tc.job.ID); !errors.Is(err, asynq.ErrTaskNotFound) {
			t.Errorf("the abandoned task is still on queue %s: %+v, %v", tc.queue, info, err)
		}
	}
}
