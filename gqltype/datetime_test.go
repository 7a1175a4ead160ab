package gqltype

import (
	"bytes"
	"testing"
	"time"
)

func TestMarshalDateTime(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	for _, c := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2023, 7, 11, 17, 32, 2, 123456789, loc), `"2023-07-11T15:32:02.123Z"`},
		{time.Date(2023, 7, 11, 15, 32, 2, 0, time.UTC), `"2023-07-11T15:32:02.000Z"`},
	} {
		var b bytes.Buffer
		MarshalDateTime(c.in).MarshalGQL(&b)
		if b.String() != c.want {
			t.Errorf("MarshalDateTime(%v) = %s, want %s", c.in, b.String(), c.want)
		}
	}
}

func TestUnmarshalDateTime(t *testing.T) {
	got, err := UnmarshalDateTime("2023-07-11T17:32:02.1239+02:00")
	if err != nil || !got.Equal(time.Date(2023, 7, 11, 15, 32, 2, 123e6, time.UTC)) || got.Location() != time.UTC {
		t.Fatalf("UnmarshalDateTime = %v, %v", got, err)
	}
	for _, bad := range []any{"yesterday", 12, nil} {
		if _, err := UnmarshalDateTime(bad); err == nil {
			t.Errorf("UnmarshalDateTime(%v) accepted", bad)
		}
	}
}
