package redisinfo

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/rueidis"
)

// CPU is the CPU time a Redis has used since it started, in seconds, from
// INFO cpu: Sys and User of the whole process (used_cpu_sys,
// used_cpu_user), and MainSys and MainUser of its main thread, the one
// that runs commands (used_cpu_*_main_thread, Redis 7 and later; Main
// says whether they were there). Summed, it is the CPU of several masters.
type CPU struct {
	Sys, User         float64
	MainSys, MainUser float64
	Main              bool
}

// Total is the whole process's CPU time, system and user.
func (c CPU) Total() float64 { return c.Sys + c.User }

// MainTotal is the main thread's CPU time, system and user.
func (c CPU) MainTotal() float64 { return c.MainSys + c.MainUser }

// Sub is the CPU used between before and c.
func (c CPU) Sub(before CPU) CPU {
	return CPU{Sys: c.Sys - before.Sys, User: c.User - before.User,
		MainSys: c.MainSys - before.MainSys, MainUser: c.MainUser - before.MainUser,
		Main: c.Main && before.Main}
}

// Add sums two readings (of two masters, or of two runs): the main
// thread's figures only when both have them.
func (c CPU) Add(o CPU) CPU {
	s := CPU{Sys: c.Sys + o.Sys, User: c.User + o.User,
		MainSys: c.MainSys + o.MainSys, MainUser: c.MainUser + o.MainUser, Main: c.Main && o.Main}
	if !s.Main {
		s.MainSys, s.MainUser = 0, 0
	}
	return s
}

// ErrNoCPU is ParseCPU's answer to an INFO without used_cpu_sys and
// used_cpu_user (a server that does not report them, such as the embedded
// store).
var ErrNoCPU = errors.New("no used_cpu_sys and used_cpu_user in INFO cpu")

// ParseCPU reads the CPU fields of an INFO cpu answer.
func ParseCPU(info string) (CPU, error) {
	f := Fields(info)
	num := func(name string) (float64, bool) {
		v, err := strconv.ParseFloat(f[name], 64)
		return v, err == nil
	}
	sys, okSys := num("used_cpu_sys")
	user, okUser := num("used_cpu_user")
	if !okSys || !okUser {
		return CPU{}, ErrNoCPU
	}
	c := CPU{Sys: sys, User: user}
	mainSys, okMainSys := num("used_cpu_sys_main_thread")
	mainUser, okMainUser := num("used_cpu_user_main_thread")
	if okMainSys && okMainUser {
		c.MainSys, c.MainUser, c.Main = mainSys, mainUser, true
	}
	return c, nil
}

// ReadCPU is the CPU time used so far by every master of c, summed.
func ReadCPU(ctx context.Context, c rueidis.Client) (CPU, Masters, error) {
	sum := CPU{Main: true}
	n, err := each(ctx, c, "cpu", func(info string) error {
		one, err := ParseCPU(info)
		sum = sum.Add(one)
		return err
	})
	if err != nil {
		return CPU{}, 0, err
	}
	return sum, n, nil
}
