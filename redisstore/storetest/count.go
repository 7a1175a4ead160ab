package storetest

import (
	"context"
	"net"
	"sync/atomic"
)

// CountingDial is a redisstore.Options.Dial (and, wrapped, a rueidis
// DialCtxFn) whose connections add every byte Redis sends back to n: what
// a page's reads cost in replies.
func CountingDial(n *atomic.Int64) func(ctx context.Context, addr string, d *net.Dialer) (net.Conn, error) {
	return CountingDialBoth(n, nil)
}

// CountingDialBoth is CountingDial adding, when sent is not nil, every
// byte sent to Redis to sent too: what a request's commands cost to send,
// which grows with the keys and arguments they name (a script's keys
// included, whose reads the replies alone do not show).
func CountingDialBoth(replies, sent *atomic.Int64) func(ctx context.Context, addr string, d *net.Dialer) (net.Conn, error) {
	return func(ctx context.Context, addr string, d *net.Dialer) (net.Conn, error) {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, n: replies, sent: sent}, nil
	}
}

// countingConn counts the bytes Redis sends back, and those sent to it
// when sent is set.
type countingConn struct {
	net.Conn
	n, sent *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// Write counts b before it goes out: counted after, the count could land
// in a later window than the request, whose reply (and so the request's
// end) may come before the writing goroutine runs again. A short write
// takes back what did not go.
func (c countingConn) Write(b []byte) (int, error) {
	if c.sent == nil {
		return c.Conn.Write(b)
	}
	c.sent.Add(int64(len(b)))
	n, err := c.Conn.Write(b)
	c.sent.Add(int64(n - len(b)))
	return n, err
}
