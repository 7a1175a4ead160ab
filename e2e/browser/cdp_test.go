package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// chrome is a headless Chromium driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on its fd 3, replies and events on its
// fd 4, each message JSON ended by a NUL byte). No port, no websocket, no
// dependency: just the few commands the tests need.
type chrome struct {
	cmd    *exec.Cmd
	out    io.WriteCloser // to Chromium's fd 3
	stderr *lockedBuffer

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpMessage
	onEvent func(cdpMessage)
	dead    error // set when the pipe closes
}

type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startChrome launches bin with a fresh profile and the given extra flags;
// onEvent sees every event (on the reader goroutine: it must not call back
// into the browser). The browser is killed when the test ends.
func startChrome(t *testing.T, bin string, onEvent func(cdpMessage), flags ...string) *chrome {
	t.Helper()
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-default-apps", "--mute-audio",
		"--user-data-dir=" + t.TempDir(),
		"--remote-debugging-pipe",
	}, flags...)
	c := &chrome{
		cmd:     exec.Command(bin, args...),
		out:     cmdW,
		stderr:  &lockedBuffer{},
		pending: map[int64]chan cdpMessage{},
		onEvent: onEvent,
	}
	c.cmd.ExtraFiles = []*os.File{cmdR, evW} // fd 3, fd 4
	c.cmd.Stdout, c.cmd.Stderr = c.stderr, c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	// The child holds its ends now.
	cmdR.Close()
	evW.Close()
	go c.read(evR)
	t.Cleanup(func() {
		cmdW.Close()
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		evR.Close()
		if t.Failed() {
			t.Logf("chromium output:\n%s", c.stderr.String())
		}
	})
	return c
}

func (c *chrome) read(r io.Reader) {
	br := bufio.NewReader(r)
	var err error
	for {
		var raw []byte
		raw, err = br.ReadBytes(0)
		if err != nil {
			break
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		if c.onEvent != nil {
			c.onEvent(m)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dead = fmt.Errorf("devtools pipe closed: %v", err)
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// call sends method with params to the session (the browser when session
// is "") and decodes the result into result when it is not nil.
func (c *chrome) call(ctx context.Context, session, method string, params, result any) error {
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return c.dead
	}
	c.nextID++
	id := c.nextID
	ch := make(chan cdpMessage, 1)
	c.pending[id] = ch
	c.mu.Unlock()

	if params == nil {
		params = struct{}{}
	}
	req := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		req["sessionId"] = session
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c.mu.Lock()
	_, err = c.out.Write(append(raw, 0))
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	case m, ok := <-ch:
		if !ok {
			c.mu.Lock()
			defer c.mu.Unlock()
			return fmt.Errorf("%s: %w", method, c.dead)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	}
}

// eval evaluates a JavaScript expression in the session's page and decodes
// its (JSON-serializable) value into out.
func (c *chrome) eval(ctx context.Context, session, expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := c.call(ctx, session, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true,
	}, &res)
	if err != nil {
		return err
	}
	if d := res.ExceptionDetails; d != nil {
		return errors.New("javascript: " + d.Text + " " + d.Exception.Description)
	}
	if out == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}
