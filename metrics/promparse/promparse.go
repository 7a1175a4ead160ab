// Package promparse is a strict parser of the Prometheus text exposition
// format, for tests: it checks what a scraper relies on (HELP and TYPE
// before samples, one declaration per family, valid names, quoted and
// escaped label values, histogram buckets cumulative and ending in +Inf
// equal to _count) and returns the samples.
package promparse

import (
	"bufio"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Sample is one sample line.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Label returns the value of label name, "" when absent.
func (s Sample) Label(name string) string { return s.Labels[name] }

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// Parse parses and checks text, returning its samples in order.
func Parse(text string) ([]Sample, error) {
	types := map[string]string{}
	helps := map[string]bool{}
	var out []Sample
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "#") {
			f := strings.SplitN(l, " ", 4)
			if len(f) < 3 || (f[1] != "HELP" && f[1] != "TYPE") {
				continue // a comment
			}
			name := f[2]
			if !metricName.MatchString(name) {
				return nil, fmt.Errorf("line %d: bad metric name %q", line, name)
			}
			if f[1] == "HELP" {
				if helps[name] {
					return nil, fmt.Errorf("line %d: second HELP for %s", line, name)
				}
				helps[name] = true
				continue
			}
			if _, ok := types[name]; ok || len(f) != 4 {
				return nil, fmt.Errorf("line %d: second or bad TYPE for %s", line, name)
			}
			switch f[3] {
			case "counter", "gauge", "histogram", "summary", "untyped":
			default:
				return nil, fmt.Errorf("line %d: bad type %q", line, f[3])
			}
			types[name] = f[3]
			continue
		}
		s, err := parseSample(l)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w: %q", line, err, l)
		}
		fam := family(s.Name, types)
		if types[fam] == "" || !helps[fam] {
			return nil, fmt.Errorf("line %d: sample %s before its HELP and TYPE", line, s.Name)
		}
		if types[fam] == "counter" && s.Value < 0 {
			return nil, fmt.Errorf("line %d: negative counter", line)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, checkHistograms(out, types)
}

// family is the metric family a sample belongs to.
func family(name string, types map[string]string) string {
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok && types[base] == "histogram" {
			return base
		}
	}
	return name
}

func parseSample(l string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	i := strings.IndexAny(l, "{ ")
	if i < 0 {
		return s, fmt.Errorf("no value")
	}
	s.Name = l[:i]
	if !metricName.MatchString(s.Name) {
		return s, fmt.Errorf("bad metric name")
	}
	rest := l[i:]
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.IndexByte(rest, '=')
			if eq < 0 {
				return s, fmt.Errorf("bad labels")
			}
			name := rest[:eq]
			if !labelName.MatchString(name) {
				return s, fmt.Errorf("bad label name %q", name)
			}
			if _, dup := s.Labels[name]; dup {
				return s, fmt.Errorf("duplicate label %q", name)
			}
			rest = rest[eq+1:]
			if !strings.HasPrefix(rest, `"`) {
				return s, fmt.Errorf("unquoted label value")
			}
			var val strings.Builder
			j := 1
			for ; j < len(rest) && rest[j] != '"'; j++ {
				if rest[j] == '\\' {
					j++
					if j == len(rest) {
						return s, fmt.Errorf("dangling escape")
					}
					switch rest[j] {
					case '\\':
						val.WriteByte('\\')
					case '"':
						val.WriteByte('"')
					case 'n':
						val.WriteByte('\n')
					default:
						return s, fmt.Errorf("bad escape \\%c", rest[j])
					}
					continue
				}
				if rest[j] == '\n' {
					return s, fmt.Errorf("raw newline in label value")
				}
				val.WriteByte(rest[j])
			}
			if j == len(rest) {
				return s, fmt.Errorf("unterminated label value")
			}
			s.Labels[name] = val.String()
			rest = rest[j+1:]
			if strings.HasPrefix(rest, ",") {
				rest = rest[1:]
			} else if !strings.HasPrefix(rest, "}") {
				return s, fmt.Errorf("labels not separated by commas")
			}
		}
	}
	f := strings.Fields(rest)
	if len(f) < 1 || len(f) > 2 || !strings.HasPrefix(rest, " ") {
		return s, fmt.Errorf("want one value and an optional timestamp")
	}
	v, err := parseFloat(f[0])
	if err != nil {
		return s, err
	}
	s.Value = v
	return s, nil
}

func parseFloat(v string) (float64, error) {
	switch v {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(v, 64)
}

// key is a sample's labels without le, as one string.
func key(s Sample) string {
	names := make([]string, 0, len(s.Labels))
	for n := range s.Labels {
		if n != "le" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%q,", n, s.Labels[n])
	}
	return b.String()
}

func checkHistograms(samples []Sample, types map[string]string) error {
	type series struct {
		les, counts []float64
		sum, count  *float64
	}
	all := map[string]*series{}
	get := func(fam string, s Sample) *series {
		k := fam + "{" + key(s) + "}"
		if all[k] == nil {
			all[k] = &series{}
		}
		return all[k]
	}
	for _, s := range samples {
		fam := family(s.Name, types)
		if types[fam] != "histogram" {
			continue
		}
		h := get(fam, s)
		v := s.Value
		switch s.Name {
		case fam + "_bucket":
			le, ok := s.Labels["le"]
			if !ok {
				return fmt.Errorf("%s bucket without le", fam)
			}
			f, err := parseFloat(le)
			if err != nil {
				return fmt.Errorf("%s: bad le %q", fam, le)
			}
			h.les = append(h.les, f)
			h.counts = append(h.counts, v)
		case fam + "_sum":
			h.sum = &v
		case fam + "_count":
			h.count = &v
		default:
			return fmt.Errorf("%s: stray sample %s", fam, s.Name)
		}
	}
	for k, h := range all {
		if h.sum == nil || h.count == nil || len(h.les) == 0 {
			return fmt.Errorf("%s: want buckets, _sum and _count", k)
		}
		for i := 1; i < len(h.les); i++ {
			if h.les[i] <= h.les[i-1] || h.counts[i] < h.counts[i-1] {
				return fmt.Errorf("%s: buckets not increasing and cumulative", k)
			}
		}
		if !math.IsInf(h.les[len(h.les)-1], 1) || h.counts[len(h.counts)-1] != *h.count {
			return fmt.Errorf("%s: last bucket must be +Inf and equal _count", k)
		}
	}
	return nil
}

// Find returns the value of the sample called name with every given label
// (alternating names and values), and whether there is one.
func Find(samples []Sample, name string, labels ...string) (float64, bool) {
next:
	for _, s := range samples {
		if s.Name != name {
			continue
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if s.Labels[labels[i]] != labels[i+1] {
				continue next
			}
		}
		return s.Value, true
	}
	return 0, false
}
