//go:build !unix

package mcphttp_test

import (
	"errors"
	"time"
)

// processCPU is not measured on this system: the cpu-ns figure of the benchmarks reads 0.
func processCPU() time.Duration { return 0 }

// raiseFDLimit is not supported on this system.
func raiseFDLimit(uint64) error {
	return errors.New("raising the open-file limit is not supported here")
}
