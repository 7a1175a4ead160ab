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
	return func(ctx context.Context, addr string, d *net.Dialer) (net.Conn, error) {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, n: n}, nil
	}
}

// countingConn counts the bytes Redis sends back.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}
