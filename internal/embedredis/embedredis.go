// Package embedredis runs an in-process Redis-compatible server (miniredis) on a loopback port,
// so that the whole farm runs in one process on a machine without Redis. It speaks enough of
// the protocol, Lua included, for asynq and the farm's result lists. It keeps nothing on disk:
// queued work is lost when the process stops, which is fine for the one-machine default and is
// why a production farm points at a real Redis.
package embedredis

import (
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Server is a running embedded server.
type Server struct {
	m    *miniredis.Miniredis
	stop chan struct{}
	done chan struct{}
}

// Start starts a server on 127.0.0.1 at an ephemeral port.
func Start() (*Server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("embedredis: start: %w", err)
	}
	s := &Server{m: m, stop: make(chan struct{}), done: make(chan struct{})}
	go s.expire()
	return s, nil
}

// expire moves miniredis's TTL clock with the wall clock, which it does not do by itself, so
// that keys with an expiry (unclaimed results, asynq heartbeats) really expire.
func (s *Server) expire() {
	defer close(s.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.m.FastForward(now.Sub(last))
			last = now
		}
	}
}

// Addr returns host:port.
func (s *Server) Addr() string { return s.m.Addr() }

// Close stops the server.
func (s *Server) Close() {
	close(s.stop)
	<-s.done
	s.m.Close()
}
