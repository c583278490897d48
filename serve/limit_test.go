package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// hangGuard bounds every wait in these tests; none is an assertion on time.
const hangGuard = 5 * time.Second

// eventListener records, in order, each connection the server takes from
// the kernel and each one it closes, keyed by the client's address.
type eventListener struct {
	net.Listener
	mu     sync.Mutex
	events []string
}

func (l *eventListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.record("accept " + c.RemoteAddr().String())
	return &eventConn{Conn: c, l: l}, nil
}

func (l *eventListener) record(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventListener) log() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

type eventConn struct {
	net.Conn
	l    *eventListener
	once sync.Once
}

func (c *eventConn) Close() error {
	c.once.Do(func() { c.l.record("close " + c.RemoteAddr().String()) })
	return c.Conn.Close()
}

// mostHeld replays the log: the most connections the server held at once.
func mostHeld(events []string) int {
	held, most := 0, 0
	for _, e := range events {
		if strings.HasPrefix(e, "accept ") {
			held++
		} else {
			held--
		}
		most = max(most, held)
	}
	return most
}

// serveOn runs srv on a fresh loopback listener until the test ends.
func serveOn(t *testing.T, srv *Server) *eventListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	el := &eventListener{Listener: ln}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, el) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(2 * hangGuard):
			t.Error("Serve did not return")
		}
	})
	return el
}

// client is one raw connection to the server.
type client struct {
	conn net.Conn
	r    *bufio.Reader
}

func dial(t *testing.T, addr net.Addr) *client {
	t.Helper()
	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(2 * hangGuard)); err != nil {
		t.Fatal(err)
	}
	return &client{conn: conn, r: bufio.NewReader(conn)}
}

func (c *client) name() string { return c.conn.LocalAddr().String() }

// send writes a GET of the index; keepAlive false asks the server to close
// the connection after answering.
func (c *client) send(t *testing.T, keepAlive bool) {
	t.Helper()
	conn := "keep-alive"
	if !keepAlive {
		conn = "close"
	}
	if _, err := fmt.Fprintf(c.conn, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: %s\r\n\r\n", conn); err != nil {
		t.Fatal(err)
	}
}

// answer reads one response and its body and returns its status.
func (c *client) answer(t *testing.T) int {
	t.Helper()
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatalf("%s: read the answer: %v", c.name(), err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// With the cap full of idle keep-alive connections, further clients wait in
// the kernel's queue, not in the server: none is taken until a held
// connection closes, and then each is answered.
func TestConnectionCapHoldsFurtherConnectionsUntilOneCloses(t *testing.T) {
	const limit, extra = 2, 3
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, MaxConns: limit})
	el := serveOn(t, srv)

	idle := make([]*client, limit)
	for i := range idle {
		idle[i] = dial(t, el.Addr())
		idle[i].send(t, true)
		if code := idle[i].answer(t); code != http.StatusOK {
			t.Fatalf("idle client %d: %d", i, code)
		}
	}
	waiting := make([]*client, extra)
	for i := range waiting {
		waiting[i] = dial(t, el.Addr())
		waiting[i].send(t, false)
	}
	idle[0].conn.Close()
	idle[1].conn.Close()
	for i, c := range waiting {
		if code := c.answer(t); code != http.StatusOK {
			t.Errorf("waiting client %d: %d", i, code)
		}
	}

	events := el.log()
	if most := mostHeld(events); most > limit {
		t.Errorf("the server held %d connections at once, cap %d:\n%s", most, limit, strings.Join(events, "\n"))
	}
	// The server notices the two closes in either order.
	firstClose := slices.IndexFunc(events, func(e string) bool {
		return e == "close "+idle[0].name() || e == "close "+idle[1].name()
	})
	for _, c := range waiting {
		if at := slices.Index(events, "accept "+c.name()); firstClose < 0 || at < firstClose {
			t.Errorf("%s taken before a held connection closed:\n%s", c.name(), strings.Join(events, "\n"))
		}
	}
}

// A client that holds its slot without asking anything, after a request or
// from the start, loses it when its timeout runs out, so a full cap frees
// itself and the next client is answered.
func TestIdleConnectionsFreeTheirSlot(t *testing.T) {
	tests := []struct {
		name         string
		askedOnce    bool
		shortTimeout func(*httpTimeouts)
	}{
		{"idle after a request", true, func(to *httpTimeouts) { to.idle = 50 * time.Millisecond }},
		{"silent since connecting", false, func(to *httpTimeouts) { to.readHeader = 50 * time.Millisecond }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := fixtureSnapshot(t)
			srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, MaxConns: 1})
			tt.shortTimeout(&srv.timeouts)
			el := serveOn(t, srv)

			holder := dial(t, el.Addr())
			if tt.askedOnce {
				holder.send(t, true)
				if code := holder.answer(t); code != http.StatusOK {
					t.Fatalf("holder: %d", code)
				}
			}
			next := dial(t, el.Addr())
			next.send(t, false)
			if code := next.answer(t); code != http.StatusOK {
				t.Fatalf("next: %d", code)
			}
			// The server closed the holder: its next read ends.
			if _, err := holder.r.ReadByte(); err != io.EOF {
				t.Errorf("holder read after its timeout: %v, want EOF", err)
			}
			events := el.log()
			closed := slices.Index(events, "close "+holder.name())
			taken := slices.Index(events, "accept "+next.name())
			if closed < 0 || taken < closed || mostHeld(events) > 1 {
				t.Errorf("next taken before the holder's slot was freed:\n%s", strings.Join(events, "\n"))
			}
		})
	}
}
