package storetest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Reply values a Fake's answer function may return besides raw RESP.
const (
	// Hang never answers the command, like a Redis that stopped responding.
	Hang = "\x00hang"
	// Drop closes the connection instead of answering.
	Drop = "\x00drop"
)

// Fake is a TCP server speaking just enough RESP for rueidis to connect to
// it: it answers the connection handshake (HELLO, CLIENT, SELECT) and PING
// itself and every other command with what its answer function returns:
// raw RESP (for example "-CLUSTERDOWN The cluster is down\r\n"), Hang or
// Drop. It stands in for a Redis in states a test cannot easily put a real
// one in.
type Fake struct {
	Addr string

	ln     net.Listener
	answer func(cmd []string) string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
	done   chan struct{}
}

// NewFake starts a Fake on a free local port; it stops when the test ends.
func NewFake(tb testing.TB, answer func(cmd []string) string) *Fake {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	f := &Fake{Addr: ln.Addr().String(), ln: ln, answer: answer, conns: map[net.Conn]bool{}, done: make(chan struct{})}
	f.wg.Add(1)
	go f.accept()
	tb.Cleanup(f.Close)
	return f
}

// ErrorReply answers every command with the error reply msg
// ("CLUSTERDOWN The cluster is down").
func ErrorReply(msg string) func([]string) string {
	return func([]string) string { return "-" + msg + "\r\n" }
}

// Close stops listening and cuts every connection: the address then
// refuses connections.
func (f *Fake) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	close(f.done)
	_ = f.ln.Close()
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *Fake) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			_ = c.Close()
			return
		}
		f.conns[c] = true
		f.wg.Add(1)
		f.mu.Unlock()
		go f.serve(c)
	}
}

func (f *Fake) serve(c net.Conn) {
	defer f.wg.Done()
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		cmd, err := readCommand(r)
		if err != nil {
			return
		}
		var out string
		switch strings.ToUpper(cmd[0]) {
		case "HELLO":
			out = "%2\r\n+proto\r\n:3\r\n+version\r\n+7.0.0\r\n"
		case "CLIENT", "SELECT":
			out = "+OK\r\n"
		case "PING":
			out = "+PONG\r\n"
		default:
			out = f.answer(cmd)
		}
		switch out {
		case Drop:
			return
		case Hang:
			<-f.done
			return
		}
		if _, err := io.WriteString(c, out); err != nil {
			return
		}
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if len(line) < 2 || line[0] != '*' {
		return nil, errors.New("fake redis: not an array: " + line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 1 {
		return nil, errors.New("fake redis: bad array length")
	}
	cmd := make([]string, n)
	for i := range cmd {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		head = strings.TrimRight(head, "\r\n")
		if len(head) < 2 || head[0] != '$' {
			return nil, errors.New("fake redis: not a bulk string")
		}
		size, err := strconv.Atoi(head[1:])
		if err != nil || size < 0 {
			return nil, errors.New("fake redis: bad bulk length")
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		cmd[i] = string(buf[:size])
	}
	return cmd, nil
}
