// Package onewrite sends an HTTP/1 answer whose body the handler has in memory (a cached tile)
// in one write system call, header and body together.
//
// Go's net/http buffers a connection's output in 4 KiB: an answer of a 14 KB tile leaves it in
// two writes, the header with the first 3.8 KB (the buffer, full), then the rest. On loopback
// and on a LAN that second system call, and the second segment it sends, are a third of what
// the server spends on the tile. A Listener's connections can hold one write back and send it
// with the next one in one writev; Write arms that hold for the body it writes and flushes the
// answer before it returns, so nothing is held past the handler's own call. Answers that do
// not go through Write (and every answer of a connection not from a Listener, HTTP/2, TLS)
// are written as before.
//
// Serve with both halves:
//
//	srv := &http.Server{Handler: h, ConnContext: onewrite.ConnContext}
//	srv.Serve(onewrite.Listener(ln))
//
// and write a body with onewrite.Write(w, r, body) once its headers (Content-Length among
// them) are set.
package onewrite

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// Listener returns a listener whose connections take the writes that Write arms (one
// write system call for the header and the body). Everything else passes through.
func Listener(ln net.Listener) net.Listener {
	return &listener{Listener: ln, bufs: sync.Pool{New: func() any { return new(heldBuf) }}}
}

type listener struct {
	net.Listener
	// bufs are the copies of held writes, taken while a hold is armed: an idle connection
	// keeps none, so the listener's memory follows the answers in flight.
	bufs sync.Pool
}

// heldBuf is the copy of a held write: net/http's 4 KiB connection buffer, flushed full.
type heldBuf [4 << 10]byte

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: c, bufs: &l.bufs}, nil
}

// connKey is the context key of a request's connection.
type connKey struct{}

// ConnContext is an http.Server's ConnContext for a server on a Listener: it puts the
// connection in the context of its requests, where Write finds it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if oc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, connKey{}, oc)
	}
	return ctx
}

// Write writes body, the whole body of the answer, through w after its header is set: on a
// connection from a Listener (HTTP/1), the header and the body leave in one writev and the
// answer is flushed before Write returns; elsewhere it is w.Write(body).
func Write(w http.ResponseWriter, r *http.Request, body []byte) error {
	c, _ := r.Context().Value(connKey{}).(*Conn)
	if c == nil || r.ProtoMajor != 1 || len(body) == 0 {
		_, err := w.Write(body)
		return err
	}
	c.hold()
	defer c.release()
	if _, err := w.Write(body); err != nil {
		return err
	}
	// The flush ends the answer's writes here, the held one joined with the last.
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
		return nil
	}
	return http.NewResponseController(w).Flush()
}

// Conn is a Listener's connection: while Write's hold is armed, the first write is kept (a
// copy) and leaves with the next in one writev, or alone when the hold is released.
type Conn struct {
	net.Conn

	bufs    *sync.Pool // of *heldBuf
	mu      sync.Mutex // net/http writes from the connection's goroutine; the lock is for safety
	holding bool
	buf     *heldBuf    // from bufs while the hold is armed
	held    []byte      // the held write's bytes (a copy: a writer may reuse its buffer)
	vec     [2][]byte   // the held write and the next, for writev
	iov     net.Buffers // over vec: a field, so that writev costs no allocation
	err     error       // the first write error, returned by every later write
}

func (c *Conn) hold() {
	c.mu.Lock()
	c.holding = true
	if c.buf == nil {
		c.buf = c.bufs.Get().(*heldBuf)
		c.held = c.buf[:0]
	}
	c.mu.Unlock()
}

// release sends a write still held and disarms the hold.
func (c *Conn) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding = false
	if len(c.held) > 0 && c.err == nil {
		_, c.err = c.Conn.Write(c.held)
	}
	if c.buf != nil {
		c.bufs.Put(c.buf)
		c.buf, c.held = nil, nil
	}
}

// Write writes p, or while the hold is armed keeps the first write and sends it with the
// second (which disarms the hold).
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if !c.holding {
		n, err := c.Conn.Write(p)
		c.err = err
		return n, err
	}
	if len(c.held) == 0 {
		c.held = append(c.held, p...) // a flush of net/http's buffer fits in the pooled one
		return len(p), nil
	}
	c.holding = false
	held := len(c.held)
	var n int64
	var err error
	if _, vectored := c.Conn.(*net.TCPConn); vectored {
		c.vec = [2][]byte{c.held, p}
		c.iov = c.vec[:]
		n, err = c.iov.WriteTo(c.Conn)  // one writev
		c.vec, c.iov = [2][]byte{}, nil // p is not kept
	} else {
		// A connection without writev (a test's, a pipe): one write of the two joined.
		c.held = append(c.held, p...)
		var w int
		w, err = c.Conn.Write(c.held)
		n = int64(w)
	}
	c.held = c.held[:0]
	c.err = err
	return max(int(n)-held, 0), err
}

// ReadFrom keeps net/http's sendfile path (it looks for an io.ReaderFrom on the connection).
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	c.release()
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c}, r)
}

// CloseWrite keeps net/http's half-close before it closes a connection (it looks for one).
func (c *Conn) CloseWrite() error {
	c.release()
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writerOnly hides Conn's ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }
