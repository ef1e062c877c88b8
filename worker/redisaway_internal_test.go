package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// flakyRedis fails its first down PINGs, then answers.
type flakyRedis struct {
	down  int32
	pings atomic.Int32
}

func (f *flakyRedis) Ping(ctx context.Context) *redis.StatusCmd {
	if f.pings.Add(1) <= f.down {
		return redis.NewStatusResult("", errors.New("dial tcp: connection refused"))
	}
	return redis.NewStatusResult("PONG", nil)
}

// away is an awayWatch that says Redis was or was not unreachable.
type away bool

func (a away) failedSince(time.Time) bool { return bool(a) }

// TestAwaitRedis: a task that failed while Redis was unreachable hands its error to asynq only
// once Redis answers (or the wait is over), marked errRedisAway, and is retried after a second;
// other tasks pass unchanged and are not delayed.
func TestAwaitRedis(t *testing.T) {
	failure := errors.New("seed: record part: connection refused")
	run := func(w awayWatch, f *flakyRedis, wait time.Duration, result error) (error, time.Duration) {
		h := awaitRedis(w, f, wait, 10*time.Millisecond)(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return result }))
		start := time.Now()
		err := h.ProcessTask(context.Background(), asynq.NewTask("t", nil))
		return err, time.Since(start)
	}

	f := &flakyRedis{}
	if err, _ := run(away(true), f, time.Second, nil); err != nil || f.pings.Load() != 0 {
		t.Errorf("success: %v after %d pings, want nil and none", err, f.pings.Load())
	}
	f = &flakyRedis{down: 1 << 30}
	if err, _ := run(away(false), f, time.Second, failure); err != failure || f.pings.Load() != 0 {
		t.Errorf("failure while Redis answered: %v after %d pings, want the handler's error as it is, at once", err, f.pings.Load())
	}
	if d := retryDelay(0, failure, nil); d < 15*time.Second {
		t.Errorf("retry delay of an ordinary failure %s, want asynq's default (15 s or more)", d)
	}

	f = &flakyRedis{down: 5}
	err, took := run(away(true), f, 5*time.Second, failure)
	if !errors.Is(err, failure) || !errors.Is(err, errRedisAway) || f.pings.Load() != 6 {
		t.Errorf("Redis back after 5 pings: %v after %d pings, want the handler's error, marked, after 6", err, f.pings.Load())
	}
	if took < 50*time.Millisecond || took > 3*time.Second {
		t.Errorf("Redis back after 5 pings: returned after %s, want about 50 ms", took)
	}
	if d := retryDelay(0, err, nil); d != redisAwayRetry {
		t.Errorf("retry delay after Redis was unreachable %s, want %s", d, redisAwayRetry)
	}
	if d := retryDelay(0, asynq.ErrLeaseExpired, nil); d != redisAwayRetry {
		t.Errorf("retry delay of a task whose worker died %s, want %s", d, redisAwayRetry)
	}

	f = &flakyRedis{down: 1 << 30}
	err, took = run(away(true), f, 200*time.Millisecond, failure)
	if !errors.Is(err, failure) || !errors.Is(err, errRedisAway) || took < 150*time.Millisecond || took > 3*time.Second {
		t.Errorf("Redis never back: %v after %s, want the handler's error after the 200 ms wait", err, took)
	}

	// A task whose context ends stops waiting at once.
	f = &flakyRedis{down: 1 << 30}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	h := awaitRedis(away(true), f, time.Minute, 10*time.Millisecond)(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return failure }))
	start := time.Now()
	if err := h.ProcessTask(ctx, asynq.NewTask("t", nil)); !errors.Is(err, failure) || time.Since(start) > 3*time.Second {
		t.Errorf("cancelled task: %v after %s", err, time.Since(start))
	}
}

// TestRedisWatch: the hook notes a client's failures to reach Redis (here a refused dial), not
// answers such as redis.Nil or error replies, nor a caller giving up.
func TestRedisWatch(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{redis.Nil, false},
		{errors.New("ERR unknown command"), false},
		{context.Canceled, false},
		{fmt.Errorf("seed: %w", context.DeadlineExceeded), false},
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}, true},
		{fmt.Errorf("record part: %w", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}), true},
		{errors.New("READONLY You can't write against a read only replica."), true},
		{errors.New("LOADING Redis is loading the dataset in memory"), true},
	} {
		if got := unreachable(tc.err); got != tc.want {
			t.Errorf("unreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: dials are refused
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	w := &redisWatch{}
	rdb.AddHook(w)
	start := time.Now()
	if w.failedSince(start) {
		t.Fatal("failure noted before any command")
	}
	if err := rdb.Set(context.Background(), "k", "v", 0).Err(); err == nil {
		t.Fatal("SET to a closed port succeeded")
	}
	if !w.failedSince(start) {
		t.Error("a refused dial was not noted")
	}
	if w.failedSince(time.Now().Add(time.Second)) {
		t.Error("failedSince a later time")
	}
}
