package gqltype

import (
	"io"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/feedd/feedd/apierr"
)

// DateTimeLayout is RFC 3339 in UTC with exactly three fractional digits,
// e.g. 2023-07-11T15:32:02.123Z. A fixed width keeps the strings sortable
// and matches the millisecond precision timelines are ordered by.
const DateTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatDateTime renders t as the DateTime scalar does.
func FormatDateTime(t time.Time) string {
	return string(appendDateTime(nil, t))
}

func appendDateTime(b []byte, t time.Time) []byte {
	return t.UTC().Truncate(time.Millisecond).AppendFormat(b, DateTimeLayout)
}

// MarshalDateTime writes t as a DateTime: the layout's characters need
// no escaping in JSON, so it is formatted between quotes on the stack.
func MarshalDateTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		var buf [48]byte
		b := appendDateTime(append(buf[:0], '"'), t)
		_, _ = w.Write(append(b, '"'))
	})
}

// UnmarshalDateTime reads an RFC 3339 string (any offset, any precision)
// and keeps it to the millisecond, in UTC.
func UnmarshalDateTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, badInput("DateTime must be an RFC 3339 string, got %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, badInput("DateTime %q is not RFC 3339 (e.g. 2023-07-11T15:32:02.123Z)", s)
	}
	return t.UTC().Truncate(time.Millisecond), nil
}

// badInput is a client mistake, reported as BAD_USER_INPUT by the error
// presenter like any other *apierr.Error.
func badInput(format string, args ...any) error {
	return apierr.Errorf(apierr.BadInput, format, args...)
}
