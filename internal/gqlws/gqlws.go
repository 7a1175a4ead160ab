// Package gqlws is a small client of graphql-transport-ws, the WebSocket
// protocol of the graphql-ws library that feedd serves subscriptions with
// (gqlgen's transport.Websocket), for feedd's load tool and tests: Dial
// connects and waits for the server's connection_ack, Subscribe starts an
// operation whose messages are handed to a function as they arrive, each
// stamped with its arrival time, and the connection answers the server's
// pings. Apps use the graphql-ws library itself (examples/realtime).
//
// A Conn is safe for concurrent use. Each holds one goroutine that reads
// the connection until it closes; Err then says why (CloseCode its
// WebSocket close code, such as 4401 for "sign in again").
package gqlws

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Subprotocol is graphql-transport-ws's WebSocket subprotocol name.
const Subprotocol = "graphql-transport-ws"

// The protocol's message types.
const (
	typeInit     = "connection_init"
	typeAck      = "connection_ack"
	typePing     = "ping"
	typePong     = "pong"
	typeSub      = "subscribe"
	TypeNext     = "next"
	TypeError    = "error"
	TypeComplete = "complete"
)

// DefaultReadLimit bounds a message from the server unless Options says.
const DefaultReadLimit = 1 << 20

// Options configure a connection.
type Options struct {
	// Header is sent with the upgrade request (Authorization,
	// X-Viewer-Id, Origin).
	Header http.Header
	// InitPayload is connection_init's payload (nil: none), e.g.
	// {"Authorization": "Bearer <jwt>"} or, with dev auth,
	// {"X-Viewer-Id": "1102"}.
	InitPayload any
	// HTTPClient dials (nil: http.DefaultClient).
	HTTPClient *http.Client
	// ReadLimit bounds a message from the server; 0: DefaultReadLimit.
	ReadLimit int64
}

// Event is one message of a subscription, or its end.
type Event struct {
	// Type is TypeNext (Payload an execution result: data and errors),
	// TypeError (Payload a list of GraphQL errors), TypeComplete, or ""
	// when the connection ended (Err says why).
	Type    string
	Payload json.RawMessage
	At      time.Time // when it was read
	Err     error
}

// Handler receives a subscription's events on the connection's reader
// goroutine, in order; it must not block for long (it holds up every
// subscription of the connection). After TypeError, TypeComplete or a
// connection's end it is called no more.
type Handler func(Event)

type message struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	Payload any    `json:"payload,omitempty"`
}

type incoming struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Conn is one graphql-transport-ws connection.
type Conn struct {
	ws     *websocket.Conn
	ctx    context.Context // the reader's: ends with Close
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	subs map[string]Handler
	next int
	err  error // why the connection ended
}

// Dial connects to url (ws:// or wss://), sends connection_init and waits
// for connection_ack until ctx ends.
func Dial(ctx context.Context, url string, o Options) (*Conn, error) {
	ws, res, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient: o.HTTPClient, HTTPHeader: o.Header, Subprotocols: []string{Subprotocol}})
	if err != nil {
		if res != nil && res.StatusCode != http.StatusSwitchingProtocols {
			err = &StatusError{StatusCode: res.StatusCode, Err: err}
		}
		return nil, fmt.Errorf("graphql-ws dial %s: %w", url, err)
	}
	if ws.Subprotocol() != Subprotocol {
		ws.Close(websocket.StatusProtocolError, "no subprotocol")
		return nil, fmt.Errorf("graphql-ws dial %s: the server chose subprotocol %q, not %s", url, ws.Subprotocol(), Subprotocol)
	}
	limit := o.ReadLimit
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	ws.SetReadLimit(limit)
	c := &Conn{ws: ws, done: make(chan struct{}), subs: map[string]Handler{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if err := c.init(ctx, o.InitPayload); err != nil {
		c.cancel()
		ws.CloseNow()
		return nil, fmt.Errorf("graphql-ws %s: %w", url, err)
	}
	go c.read()
	return c, nil
}

// init sends connection_init and reads until connection_ack, answering
// pings meanwhile.
func (c *Conn) init(ctx context.Context, payload any) error {
	if err := c.send(ctx, message{Type: typeInit, Payload: payload}); err != nil {
		return fmt.Errorf("send connection_init: %w", err)
	}
	for {
		m, err := c.readMessage(ctx)
		if err != nil {
			return fmt.Errorf("waiting for connection_ack: %w", err)
		}
		switch m.Type {
		case typeAck:
			return nil
		case typePing:
			if err := c.send(ctx, message{Type: typePong}); err != nil {
				return fmt.Errorf("answer a ping: %w", err)
			}
		}
	}
}

func (c *Conn) send(ctx context.Context, m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.ws.Write(ctx, websocket.MessageText, b)
}

func (c *Conn) readMessage(ctx context.Context) (incoming, error) {
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		return incoming{}, err
	}
	var m incoming
	if err := json.Unmarshal(b, &m); err != nil {
		return incoming{}, fmt.Errorf("a message that is not JSON: %w", err)
	}
	return m, nil
}

// read hands each message to its subscription until the connection ends,
// then tells every subscription left.
func (c *Conn) read() {
	var err error
	for {
		var m incoming
		if m, err = c.readMessage(c.ctx); err != nil {
			break
		}
		at := time.Now()
		switch m.Type {
		case typePing:
			err = c.send(c.ctx, message{Type: typePong}) // a failure ends the loop below
		case TypeNext, TypeError, TypeComplete:
			c.mu.Lock()
			h := c.subs[m.ID]
			if m.Type != TypeNext {
				delete(c.subs, m.ID)
			}
			c.mu.Unlock()
			if h != nil {
				h(Event{Type: m.Type, Payload: m.Payload, At: at})
			}
		}
		if err != nil {
			break
		}
	}
	c.mu.Lock()
	c.err = err
	subs := c.subs
	c.subs = map[string]Handler{}
	c.mu.Unlock()
	close(c.done)
	at := time.Now()
	for _, h := range subs {
		h(Event{At: at, Err: err})
	}
}

// Subscribe starts the operation query with variables (nil: none); h gets
// its events. stop ends it (a complete message) before the server does.
func (c *Conn) Subscribe(ctx context.Context, query string, variables map[string]any, h Handler) (stop func(context.Context) error, err error) {
	c.mu.Lock()
	if c.err != nil || c.ctx.Err() != nil {
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("subscribe on a closed connection: %w", err)
	}
	c.next++
	id := strconv.Itoa(c.next)
	c.subs[id] = h
	c.mu.Unlock()
	payload := map[string]any{"query": query}
	if variables != nil {
		payload["variables"] = variables
	}
	if err := c.send(ctx, message{ID: id, Type: typeSub, Payload: payload}); err != nil {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("send subscribe: %w", err)
	}
	return func(ctx context.Context) error {
		c.mu.Lock()
		_, open := c.subs[id]
		delete(c.subs, id)
		c.mu.Unlock()
		if !open {
			return nil
		}
		return c.send(ctx, message{ID: id, Type: TypeComplete})
	}, nil
}

// Chan subscribes and returns the events on a channel of buf places,
// closed after the last; the reader waits while the channel is full.
func (c *Conn) Chan(ctx context.Context, query string, variables map[string]any, buf int) (<-chan Event, error) {
	ch := make(chan Event, buf)
	var once sync.Once
	_, err := c.Subscribe(ctx, query, variables, func(e Event) {
		ch <- e
		if e.Type != TypeNext {
			once.Do(func() { close(ch) })
		}
	})
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// Close ends the connection with a normal closure.
func (c *Conn) Close() error {
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	<-c.done
	return err
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err says why the connection ended; nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// StatusError is a refused upgrade: the server answered StatusCode (503
// past its connection limit, 403 for a refused Origin), not 101.
type StatusError struct {
	StatusCode int
	Err        error
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %v", e.StatusCode, http.StatusText(e.StatusCode), e.Err)
}

func (e *StatusError) Unwrap() error { return e.Err }

// CloseCode is the WebSocket close code err carries (4401, 1001, ...), or
// -1 when it carries none.
func CloseCode(err error) int {
	return int(websocket.CloseStatus(err))
}

// Result is the part of a next message's payload most callers read.
type Result struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// Decode reads a next event's payload as an execution result.
func (e Event) Decode() (Result, error) {
	var r Result
	if e.Type != TypeNext {
		return r, fmt.Errorf("a %q event has no result", e.Type)
	}
	if err := json.Unmarshal(e.Payload, &r); err != nil {
		return r, fmt.Errorf("decode a next message: %w", err)
	}
	return r, nil
}
