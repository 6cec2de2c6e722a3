//go:build unix

package mcphttp_test

import (
	"fmt"
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// raiseFDLimit raises the process's soft limit of open files to at least n, up to the hard
// limit; it fails saying both limits when the hard one is lower.
func raiseFDLimit(n uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Cur >= n {
		return nil
	}
	if lim.Max < n {
		return fmt.Errorf("the open-file limit is %d (hard %d), and %d are needed", lim.Cur, lim.Max, n)
	}
	lim.Cur = n
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}
