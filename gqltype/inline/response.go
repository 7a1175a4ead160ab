package inline

import (
	"bytes"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// maxPooled is the largest buffer kept for reuse: a response larger than
// that (a page of a hundred posts with their replies) is left to the
// garbage collector rather than held for the next, smaller one.
const maxPooled = 64 << 10

// buffers are the arrays responses were marshalled into, handed back by
// Release.
var buffers sync.Pool

// Buffer returns an empty buffer with room for at least n bytes, of an
// array Release handed back when one is.
func Buffer(n int) *bytes.Buffer {
	if p, ok := buffers.Get().(*[]byte); ok {
		b := bytes.NewBuffer((*p)[:0])
		b.Grow(n)
		return b
	}
	return bytes.NewBuffer(make([]byte, 0, max(n, 4<<10)))
}

// Response marshals data, an operation's result, into a Buffer: what the
// generated executor wrote into a bytes.Buffer of its own, growing it from
// 64 bytes by doubling, a fifth of a live page's allocations with the
// copy the transport makes of it.
func Response(data graphql.Marshaler) []byte {
	b := Buffer(0)
	data.MarshalGQL(b)
	return b.Bytes()
}

// Release hands b's array back for another response. Only the one who
// holds the last reference to b may: a transport once it has written the
// response, a buffer's user once it is done with it.
func Release(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooled {
		return
	}
	b = b[:0]
	buffers.Put(&b)
}
