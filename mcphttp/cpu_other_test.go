//go:build !unix

package mcphttp_test

import "time"

// processCPU is not measured on this system: the cpu-ns figure of the benchmarks reads 0.
func processCPU() time.Duration { return 0 }
