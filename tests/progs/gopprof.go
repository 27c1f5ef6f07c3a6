// gopprof: a Go program that profiles itself with runtime/pprof (the
// format net/http/pprof serves) into the file named by its first argument,
// for the CPU seconds of its second (its own, so that a loaded host does
// not thin the profile): go_hot_a does twice the work of go_hot_b,
// under the pprof label phase=a, go_hot_b under phase=b.
// With a third argument, a heap profile is written there too, every
// allocation recorded: goKeepA holds 48 blocks of 64 KiB, goKeepB 16.
// Prints "done" at exit.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
)

var sink uint64
var kept [][]byte

//go:noinline
func goKeepA() {
	for i := 0; i < 48; i++ {
		kept = append(kept, make([]byte, 65536))
	}
}

//go:noinline
func goKeepB() {
	for i := 0; i < 16; i++ {
		kept = append(kept, make([]byte, 65536))
	}
}

//go:noinline
func goHotA(n int) {
	for i := 0; i < n; i++ {
		sink = sink*6364136223846793005 + uint64(i)
	}
}

//go:noinline
func goHotB(n int) {
	for i := 0; i < n; i++ {
		sink = sink*2862933555777941757 + uint64(i)
	}
}

// cpuSeconds: the process's CPU time so far, user and system
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	secs, _ := strconv.ParseFloat(os.Args[2], 64)
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for cpuSeconds() < secs {
		pprof.Do(context.Background(), pprof.Labels("phase", "a"), func(context.Context) {
			goHotA(200000)
		})
		pprof.Do(context.Background(), pprof.Labels("phase", "b"), func(context.Context) {
			goHotB(100000)
		})
	}
	pprof.StopCPUProfile()
	f.Close()
	if len(os.Args) > 3 {
		runtime.MemProfileRate = 1
		goKeepA()
		goKeepB()
		runtime.GC()
		h, err := os.Create(os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.WriteHeapProfile(h); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		h.Close()
	}
	fmt.Println("done")
}
