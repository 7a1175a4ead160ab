package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the output")

// summarize returns what Write prints for a log.
func summarize(t *testing.T, log string) string {
	t.Helper()
	items, _, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	Write(&b, items)
	return b.String()
}

// TestGolden summarizes real go test logs of a throwaway module with a
// failing, a panicking, a racing, a timing-out and an exiting test and
// two packages that do not build: testdata/plain.log is
// `go test -race -timeout 5s ./...`, testdata/verbose.log the same with -v
// for some of the packages.
func TestGolden(t *testing.T) {
	for _, name := range []string{"plain", "verbose"} {
		t.Run(name, func(t *testing.T) {
			log, err := os.ReadFile(filepath.Join("testdata", name+".log"))
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(t, string(log))
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("summary of %s.log differs from %s (go test -update rewrites it):\n%s", name, golden, got)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, log, want string
	}{{
		name: "passing log",
		log: "ok  \texample.com/a\t0.1s\n" +
			"?   \texample.com/b\t[no test files]\n",
		want: "",
	}, {
		name: "subtest output goes with the subtest",
		log: "--- FAIL: TestT (0.00s)\n" +
			"    t_test.go:1: parent says\n" +
			"    --- FAIL: TestT/sub (0.00s)\n" +
			"        t_test.go:2: sub says\n" +
			"            its second line\n" +
			"    t_test.go:3: parent again\n" +
			"FAIL\n" +
			"FAIL\texample.com/a\t0.1s\n",
		want: "--- FAIL: TestT (0.00s)\n" +
			"    t_test.go:1: parent says\n" +
			"    t_test.go:3: parent again\n" +
			"--- FAIL: TestT/sub (0.00s)\n" +
			"    t_test.go:2: sub says\n" +
			"        its second line\n" +
			"FAIL\texample.com/a\t0.1s\n",
	}, {
		name: "verbose output goes with the test named last",
		log: "=== RUN   TestA\n" +
			"=== PAUSE TestA\n" +
			"=== RUN   TestB\n" +
			"=== PAUSE TestB\n" +
			"=== CONT  TestA\n" +
			"    a_test.go:1: from A\n" +
			"=== CONT  TestB\n" +
			"    b_test.go:1: from B\n" +
			"printed by B\n" +
			"=== NAME  TestA\n" +
			"    a_test.go:2: A fails\n" +
			"--- PASS: TestB (0.00s)\n" +
			"--- FAIL: TestA (0.00s)\n" +
			"FAIL\n" +
			"FAIL\texample.com/a\t0.1s\n",
		want: "--- FAIL: TestA (0.00s)\n" +
			"    a_test.go:1: from A\n" +
			"    a_test.go:2: A fails\n" +
			"FAIL\texample.com/a\t0.1s\n",
	}, {
		name: "a long test output shows its start and its end",
		log: "--- FAIL: TestLong (0.00s)\n" +
			strings.Repeat("    t_test.go:1: noise\n", 30) +
			"    t_test.go:2: the failure\n" +
			"FAIL\texample.com/a\t0.1s\n",
		want: "--- FAIL: TestLong (0.00s)\n" +
			strings.Repeat("    t_test.go:1: noise\n", 10) +
			"    ... (16 lines not shown)\n" +
			strings.Repeat("    t_test.go:1: noise\n", 4) +
			"    t_test.go:2: the failure\n" +
			"FAIL\texample.com/a\t0.1s\n",
	}, {
		name: "a package that fails without a failing test shows its last lines",
		log: "ok  \texample.com/a\t0.1s\n" +
			"connecting\n" +
			"2026/01/02 03:04:05 store unreachable\n" +
			"FAIL\texample.com/b\t0.1s\n",
		want: "FAIL\texample.com/b\t0.1s\n" +
			"    connecting\n" +
			"    2026/01/02 03:04:05 store unreachable\n",
	}, {
		name: "a build error ends where another package's output starts",
		log: "# example.com/b [example.com/b.test]\n" +
			"b/b_test.go:6:6: declared and not used: s\n" +
			"b/b_test.go:7:2: cannot use x (variable of type int) as string value\n" +
			"\twant string\n" +
			"printed by a test of c\n" +
			"ok  \texample.com/c\t0.1s\n" +
			"FAIL\texample.com/b [build failed]\n",
		want: "# example.com/b [example.com/b.test]\n" +
			"    b/b_test.go:6:6: declared and not used: s\n" +
			"    b/b_test.go:7:2: cannot use x (variable of type int) as string value\n" +
			"    \twant string\n" +
			"FAIL\texample.com/b [build failed]\n",
	}, {
		name: "a panic keeps its message and the first frames outside the standard library",
		log: "panic: boom [recovered]\n" +
			"\tpanic: boom\n" +
			"\n" +
			"goroutine 7 [running]:\n" +
			"testing.tRunner.func1.2({0x1, 0x2})\n" +
			"\t/usr/local/go/src/testing/testing.go:1974 +0x419\n" +
			"panic({0x1?, 0x2?})\n" +
			"\t/usr/local/go/src/runtime/panic.go:860 +0x13a\n" +
			"github.com/feedd/feedd/a.f(...)\n" +
			"\t/src/a/a.go:5\n" +
			"github.com/feedd/feedd/a.TestF(0xc0000b4248)\n" +
			"\t/src/a/a_test.go:10 +0x85\n" +
			"testing.tRunner(0xc0000b4248, 0x654170)\n" +
			"\t/usr/local/go/src/testing/testing.go:2036 +0x21d\n" +
			"\n" +
			"goroutine 8 [select]:\n" +
			"github.com/feedd/feedd/a.loop()\n" +
			"\t/src/a/a.go:50 +0x85\n" +
			"FAIL\texample.com/a\t0.1s\n",
		want: "panic: boom [recovered]\n" +
			"    \tpanic: boom\n" +
			"    goroutine 7 [running]:\n" +
			"    github.com/feedd/feedd/a.f(...)\n" +
			"    \t/src/a/a.go:5\n" +
			"    github.com/feedd/feedd/a.TestF(0xc0000b4248)\n" +
			"    \t/src/a/a_test.go:10 +0x85\n" +
			"FAIL\texample.com/a\t0.1s\n",
	}, {
		name: "the go command killing a test binary",
		log: "SIGQUIT: quit\n" +
			"*** Test killed with quit: ran too long (11m0s).\n" +
			"FAIL\texample.com/a\t660.0s\n",
		want: "*** Test killed with quit: ran too long (11m0s).\n" +
			"FAIL\texample.com/a\t660.0s\n",
	}} {
		t.Run(c.name, func(t *testing.T) {
			if got := summarize(t, c.log); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, log string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	passed := write("passed.log", "ok  \texample.com/a\t0.1s\n")
	failed := write("failed.log", "--- FAIL: TestX (0.00s)\n    x_test.go:1: no\nFAIL\nFAIL\texample.com/a\t0.1s\n")
	killed := write("killed.log", "ok  \texample.com/a\t0.1s\nsignal: killed\n")

	for _, c := range []struct {
		name string
		args []string
		want string
	}{{
		name: "logs with nothing failed print nothing",
		args: []string{"embedded=" + passed, passed},
		want: "",
	}, {
		name: "a failing log under its label",
		args: []string{"-failed=redis", "embedded=" + passed, "redis=" + failed},
		want: "-- redis\n--- FAIL: TestX (0.00s)\n    x_test.go:1: no\nFAIL\texample.com/a\t0.1s\n",
	}, {
		name: "the failed log's tail when nothing in it is recognised",
		args: []string{"-failed=cluster", "embedded=" + passed, "cluster=" + killed},
		want: "-- cluster: no failing test, panic or build error found; the log ends with:\n" +
			"ok  \texample.com/a\t0.1s\nsignal: killed\n",
	}} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(c.args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if stdout.String() != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", stdout.String(), c.want)
			}
		})
	}
}
