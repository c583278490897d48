package serve

import (
	"net"
	"sync"
)

// limitListener holds at most cap(slots) connections at once. Accept waits
// for a free slot before it takes the next connection from the kernel, so
// clients beyond the cap wait in the listen backlog, costing the server no
// descriptor and no goroutine; a connection frees its slot when it closes.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, maxConns int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, maxConns), closed: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close also wakes an Accept waiting for a slot.
func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.closed) })
	return err
}

type limitConn struct {
	net.Conn
	releaseOnce sync.Once
	release     func()
}

// Close frees the slot once, however often it is called.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.releaseOnce.Do(c.release)
	return err
}

// CloseWrite keeps the half-close net/http uses to end a connection
// gracefully (it looks for the method on the connection it was given).
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
