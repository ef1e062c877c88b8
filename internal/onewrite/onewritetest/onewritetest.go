// Package onewritetest counts the write calls of a server's connections, for the tests of the
// routes that send their answers through internal/onewrite, and compares their answers' bytes.
package onewritetest

import (
	"bytes"
	"net"
	"sync"
)

// WithoutDate returns raw HTTP answers without their Date lines, the one thing two servers'
// answers to the same requests differ in.
func WithoutDate(b []byte) []byte {
	var out []byte
	for line := range bytes.Lines(b) {
		if !bytes.HasPrefix(line, []byte("Date: ")) {
			out = append(out, line...)
		}
	}
	return out
}

// CountingListener is a listener whose connections count their Write calls. Its connections
// are no *net.TCPConn, so onewrite's listener joins a held write and the next into one Write
// (on TCP it makes one writev): one Write an answer is one write system call on TCP.
type CountingListener struct {
	net.Listener

	mu     sync.Mutex
	writes int
}

// NewCountingListener counts the writes of ln's connections.
func NewCountingListener(ln net.Listener) *CountingListener {
	return &CountingListener{Listener: ln}
}

type countingConn struct {
	net.Conn
	l *CountingListener
}

// Accept returns the next connection, counting its writes.
func (l *CountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l}, nil
}

func (c countingConn) Write(p []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes++
	c.l.mu.Unlock()
	return c.Conn.Write(p)
}

// Writes is the number of Write calls of the connections so far.
func (l *CountingListener) Writes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}
