package redisinfo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// Redis 7.0's INFO cpu, with CRLF line ends as it sends them.
const cpu70 = "# CPU\r\nused_cpu_sys:12.500000\r\nused_cpu_user:7.250000\r\nused_cpu_sys_children:0.000000\r\n" +
	"used_cpu_user_children:0.000000\r\nused_cpu_sys_main_thread:11.000000\r\nused_cpu_user_main_thread:7.000000\r\n"

func TestParseCPU(t *testing.T) {
	for _, tc := range []struct {
		name string
		info string
		want CPU
		err  error
	}{
		{"redis 7", cpu70, CPU{Sys: 12.5, User: 7.25, MainSys: 11, MainUser: 7, Main: true}, nil},
		{"redis 6.0: no main thread", "# CPU\nused_cpu_sys:1.5\nused_cpu_user:0.25\n", CPU{Sys: 1.5, User: 0.25}, nil},
		{"half the main thread", "used_cpu_sys:1\nused_cpu_user:2\nused_cpu_sys_main_thread:1\n", CPU{Sys: 1, User: 2}, nil},
		{"no user", "used_cpu_sys:1\n", CPU{}, ErrNoCPU},
		{"not a number", "used_cpu_sys:x\nused_cpu_user:1\n", CPU{}, ErrNoCPU},
		{"embedded store's stats", "# Clients\r\nconnected_clients:1\r\n", CPU{}, ErrNoCPU},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCPU(tc.info)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("ParseCPU = %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
		})
	}
	c, _ := ParseCPU(cpu70)
	if c.Total() != 19.75 || c.MainTotal() != 18 {
		t.Errorf("Total %v, MainTotal %v; want 19.75, 18", c.Total(), c.MainTotal())
	}
	d := c.Sub(CPU{Sys: 2.5, User: 0.25, MainSys: 1, MainUser: 1, Main: true})
	if d != (CPU{Sys: 10, User: 7, MainSys: 10, MainUser: 6, Main: true}) {
		t.Errorf("Sub = %+v", d)
	}
	if d := c.Sub(CPU{Sys: 1, User: 1}); d.Main {
		t.Errorf("Sub from a reading without the main thread = %+v, want Main false", d)
	}
}

func TestParseCommandStats(t *testing.T) {
	for _, tc := range []struct {
		name    string
		info    string
		want    Commands
		wantErr string
	}{
		{"redis 7", "# Commandstats\r\n" +
			"cmdstat_evalsha:calls=16,usec=1792,usec_per_call=112.00,rejected_calls=1,failed_calls=2\r\n" +
			"cmdstat_client|setinfo:calls=4,usec=3,usec_per_call=0.75,rejected_calls=0,failed_calls=0\r\n",
			Commands{"evalsha": {Calls: 16, Usec: 1792, Rejected: 1, Failed: 2}, "client|setinfo": {Calls: 4, Usec: 3}}, ""},
		{"redis 6.0: calls and usec only", "cmdstat_get:calls=3,usec=9,usec_per_call=3.00\n",
			Commands{"get": {Calls: 3, Usec: 9}}, ""},
		{"other fields", "used_cpu_sys:1\ncmdstat_ping:calls=1,usec=1\n", Commands{"ping": {Calls: 1, Usec: 1}}, ""},
		{"none", "# Commandstats\r\n", Commands{}, ""},
		{"no usec", "cmdstat_get:calls=3\n", nil, "no calls and usec"},
		{"bad number", "cmdstat_get:calls=3,usec=x\n", nil, "usec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCommandStats(tc.info)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("ParseCommandStats = %v, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("ParseCommandStats = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestCommandsSub(t *testing.T) {
	before := Commands{"get": {Calls: 10, Usec: 100}, "set": {Calls: 5, Usec: 50}, "del": {Calls: 9, Usec: 9}}
	after := Commands{"get": {Calls: 15, Usec: 160, Failed: 1}, "set": {Calls: 5, Usec: 50}, "evalsha": {Calls: 2, Usec: 224}}
	got := after.Sub(before)
	want := Commands{"get": {Calls: 5, Usec: 60, Failed: 1}, "evalsha": {Calls: 2, Usec: 224}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Sub = %v, want %v (unchanged and vanished commands left out)", got, want)
	}
}

// TestRead reads INFO from a stand-in server that answers as Redis 7, and
// from the real Redis when there is one.
func TestRead(t *testing.T) {
	ctx := context.Background()
	f := storetest.NewFake(t, func(cmd []string) string {
		if len(cmd) == 2 && strings.EqualFold(cmd[0], "INFO") {
			text := cpu70
			if strings.EqualFold(cmd[1], "commandstats") {
				text = "# Commandstats\r\ncmdstat_get:calls=3,usec=9,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n"
			}
			return fmt.Sprintf("$%d\r\n%s\r\n", len(text), text)
		}
		return "-ERR unknown command\r\n"
	})
	st, err := redisstore.Open(ctx, redisstore.Options{URL: "redis://" + f.Addr, Timeout: time.Second, DisableCache: true, SingleNode: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	c, n, err := ReadCPU(ctx, st.Client)
	if err != nil || n != 1 || c != (CPU{Sys: 12.5, User: 7.25, MainSys: 11, MainUser: 7, Main: true}) {
		t.Errorf("ReadCPU = %+v, %d, %v", c, n, err)
	}
	cmds, n, err := ReadCommands(ctx, st.Client)
	if err != nil || n != 1 || cmds["get"] != (Command{Calls: 3, Usec: 9}) {
		t.Errorf("ReadCommands = %v, %d, %v", cmds, n, err)
	}

	real := storetest.New(t)
	c, n, err = ReadCPU(ctx, real.Client)
	if !real.Real {
		// The embedded store has no INFO cpu: an error that says so.
		if err == nil || !strings.Contains(err.Error(), "INFO cpu") {
			t.Errorf("ReadCPU on the embedded store = %+v, %v; want an error naming INFO cpu", c, err)
		}
		return
	}
	if err != nil || n < 1 || c.Total() <= 0 {
		t.Errorf("ReadCPU on the real Redis = %+v, %d masters, %v", c, n, err)
	}
	// This test's own SET and DEL of its own key are counted (on the
	// master of the key's slot, on a cluster).
	before, _, err := ReadCommands(ctx, real.Client)
	if err != nil {
		t.Fatal(err)
	}
	key := real.Prefix + "redisinfo"
	for _, cmd := range []rueidis.Completed{real.Client.B().Set().Key(key).Value("1").Build(), real.Client.B().Del().Key(key).Build()} {
		if err := real.Client.Do(ctx, cmd).Error(); err != nil {
			t.Fatal(err)
		}
	}
	after, _, err := ReadCommands(ctx, real.Client)
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Sub(before); d["set"].Calls < 1 || d["del"].Calls < 1 || d["info"].Calls < 1 {
		t.Errorf("commands between two readings around a SET and a DEL: %v", d)
	}
}
