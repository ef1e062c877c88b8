package worker

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A worker stopped while it is still dialling Redis (a farm stopped right after it started, or
// a Redis that does not answer) stops cleanly: Run returns nil, not the cancelled dial.
func TestRunStoppedWhileDialling(t *testing.T) {
	dialling := make(chan struct{}, 1)
	rdb := redis.NewClient(&redis.Options{
		Addr: "127.0.0.1:1", MaxRetries: -1,
		// A Redis that never completes the connection: the dial returns only when its context
		// ends, with what net.Dialer then says ("operation was canceled").
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			select {
			case dialling <- struct{}{}:
			default:
			}
			<-ctx.Done()
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	})
	t.Cleanup(func() { rdb.Close() })
	w := New(Params{Redis: rdb, IdleAfter: time.Second, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case <-dialling:
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before dialling Redis: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the worker never dialled Redis")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a worker stopped while dialling returned %v, want a clean stop (nil)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not stop within 10s of its context ending")
	}
}
