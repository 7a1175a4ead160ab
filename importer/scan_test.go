package importer

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

var scanSeeds = []string{
	`{"type":"user","id":"1","handle":"ann","displayName":"Ann","avatarUrl":"https://x/a.png"}`,
	`{"type":"follow","follower":"111","followee":200}`,
	`{"type":"post","id":"32850","author":"200","text":"caf\u00e9 \"q\" \\ \n \ud83d\ude00","createdAt":"2023-07-11T15:32:02.123Z"}`,
	`{"type":"live","id":"9","anchor":"200","title":"t","scheduledStartAt":null,"startedAt":"2023-07-11T15:32:02Z"}`,
	`{"type":"counts","post":"32850","likes":3,"comments":1e2,"reposts":-0,"favorites":2.5}`,
	` { "type" : "user" , "id" : "1" , "handle" : "ann" } `,
	"{\"type\":\"user\",\"handle\":\"\xff\xfe\"}",
	`{"type":"user","id":"1","handle":"ann",}`,
	`{"type":"user","id":"1","handle":"ann"}}`,
	`{"type":"user","id":01}`,
	`{"type":"user","id":"1","x":{"a":[1,2]}}`,
	`{"\u0074ype":"user","id":true,"handle":false}`,
	`{}`,
	`[]`,
	`{"type":"user","id":"1","handle":"a\u00"}`,
	`{"type":"user","id":-}`,
	`{"type":"user","id":1.}`,
	`{"type":"user","id":1e}`,
	`{"type":nul}`,
	`{"":"","":""}`,
}

// FuzzScan checks the scanner against encoding/json: whatever it accepts is
// valid JSON with the same values, and it accepts every valid flat object
// without repeated fields.
func FuzzScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		var o object
		err := o.parse([]byte(line))
		flat, keys := flatObject(line)
		if err != nil {
			if flat {
				t.Fatalf("%q: rejected a flat object: %v", line, err)
			}
			return
		}
		if !json.Valid([]byte(line)) {
			t.Fatalf("%q: accepted invalid JSON", line)
		}
		if !flat {
			t.Fatalf("%q: accepted, but not a flat object with distinct keys", line)
		}
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		unknown := ""
		for _, k := range keys {
			f, known := fieldIndex[k]
			if !known {
				if unknown == "" {
					unknown = k
				}
				continue
			}
			v := m[k]
			if v == nil {
				if o.has(f) {
					t.Fatalf("%q: %s is null but set", line, k)
				}
				continue
			}
			if !o.has(f) {
				t.Fatalf("%q: %s not set", line, k)
			}
			switch v := v.(type) {
			case string:
				got, ok, err := o.str(f)
				// encoding/json makes U+FFFD of invalid UTF-8 and lone
				// surrogate escapes; the scanner refuses them instead.
				raw := string(o.vals[f].raw)
				spelled := strings.Count(raw, "\ufffd") + strings.Count(strings.ToLower(raw), `\ufffd`)
				if strings.Count(v, "\ufffd") > spelled {
					if err == nil {
						t.Fatalf("%q: %s = %q accepted; its bytes are not valid text", line, k, got)
					}
					continue
				}
				if err != nil || !ok || got != v {
					t.Fatalf("%q: %s = %q, %v, %v; want %q", line, k, got, ok, err, v)
				}
			case json.Number:
				if o.vals[f].kind != kNumber || string(o.vals[f].raw) != v.String() {
					t.Fatalf("%q: %s = %q, want number %s", line, k, o.vals[f].raw, v)
				}
			case bool:
				if o.vals[f].kind != kBool || string(o.vals[f].raw) != map[bool]string{true: "true", false: "false"}[v] {
					t.Fatalf("%q: %s = %q, want %v", line, k, o.vals[f].raw, v)
				}
			}
		}
		if o.unknown != unknown {
			t.Fatalf("%q: unknown field %q, want %q", line, o.unknown, unknown)
		}
	})
}

// flatObject reports whether line is one JSON object whose values are all
// scalars and whose known keys are distinct, and returns its keys.
func flatObject(line string) (bool, []string) {
	if !json.Valid([]byte(line)) {
		return false, nil
	}
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false, nil
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false, nil
		}
		k := tok.(string)
		if _, known := fieldIndex[k]; known && seen[k] {
			return false, nil // the scanner rejects repeated fields it knows
		}
		seen[k] = true
		keys = append(keys, k)
		tok, err = dec.Token()
		if err != nil {
			return false, nil
		}
		if _, nested := tok.(json.Delim); nested {
			return false, nil
		}
	}
	return true, keys
}

func TestScanSeeds(t *testing.T) {
	for _, s := range scanSeeds {
		var o object
		err := o.parse([]byte(s))
		flat, _ := flatObject(s)
		if (err == nil) != flat {
			t.Errorf("%q: parse error %v, flat object %v", s, err, flat)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	for s, want := range map[string]uint64{"1": 1, "007": 7, "18446744073709551615": 1<<64 - 1} {
		if got, ok := parseDecimal([]byte(s)); !ok || got != want {
			t.Errorf("%s: %d, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "18446744073709551616", "99999999999999999999", "1a", "+1", " 1"} {
		if got, ok := parseDecimal([]byte(s)); ok {
			t.Errorf("%q: %d, want an error", s, got)
		}
	}
}

// A follow line is parsed without allocating.
func TestFollowLineAllocs(t *testing.T) {
	line := []byte(`{"type":"follow","follower":"111","followee":"200"}`)
	var o object
	n := testing.AllocsPerRun(100, func() {
		if err := o.parse(line); err != nil {
			t.Fatal(err)
		}
		if _, err := o.kindOf(); err != nil {
			t.Fatal(err)
		}
		if _, err := o.follow(); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations a follow line", n)
	}
}

// BenchmarkParseFollows parses the benchmark's file of a million follows
// into batches without applying them: the importer's own share of the cost.
func BenchmarkParseFollows(b *testing.B) {
	file, err := followsFile()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		p := newParser(bytes.NewReader(file), DefaultBatchSize, 2000)
		for bt := p.next(); bt != nil; bt = p.next() {
			p.recycle(bt)
		}
		if p.err != nil && p.err != io.EOF {
			b.Fatal(p.err)
		}
	}
}
