// gochan: a Go program whose goroutines pass work through channels, for
// checking that a profiler charges its CPU to the hashing, not to the Go
// runtime's waits (futex, usleep, osyield, epollwait).
//
// usage: gochan SECONDS [CPUPROFILE]
//
// A producer sends 512-byte blocks to 4 hashing goroutines through an
// unbuffered channel; each hashes a block twice with sha256 and sends the
// digest to a collector. Every goroutine blocks on a channel between two
// blocks (a few microseconds of work), so the runtime parks and wakes
// threads all the time: perf record -e cpu-clock puts about 75% of this
// program's CPU in sha256 and 6% in the runtime's waits. Prints
// "ready PID" first, then "hashed N" when done. With CPUPROFILE, Go's own
// CPU profile of the run (runtime/pprof) is written there. With
// GOCHAN_SIGNALS set, a goroutine also sends the process SIGURG (Go's
// preemption signal, which its handler takes for a stray one) every 50 us,
// so its threads spend some time in Go's signal handler.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func hashBlock(b []byte) [32]byte {
	sum := sha256.Sum256(b)
	for i := 0; i < 1; i++ {
		sum = sha256.Sum256(append(b[:len(b)-32], sum[:]...))
	}
	return sum
}

func main() {
	if len(os.Args) != 2 && len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gochan SECONDS [CPUPROFILE]")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil || secs <= 0 {
		fmt.Fprintln(os.Stderr, "gochan: bad SECONDS")
		os.Exit(2)
	}
	if len(os.Args) == 3 {
		f, err := os.Create(os.Args[2])
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gochan:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("ready %d\n", os.Getpid())
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	if os.Getenv("GOCHAN_SIGNALS") != "" {
		go func() {
			for time.Now().Before(deadline) {
				syscall.Kill(os.Getpid(), syscall.SIGURG)
				time.Sleep(50 * time.Microsecond)
			}
		}()
	}
	work := make(chan []byte)
	sums := make(chan [32]byte)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				sums <- hashBlock(b)
			}
		}()
	}
	done := make(chan int)
	go func() {
		n := 0
		for range sums {
			n++
		}
		done <- n
	}()
	block := make([]byte, 512)
	for i := 0; time.Now().Before(deadline); i++ {
		block[i%len(block)]++
		b := make([]byte, len(block))
		copy(b, block)
		work <- b
	}
	close(work)
	wg.Wait()
	close(sums)
	fmt.Printf("hashed %d\n", <-done)
	// the CPU the process used (the kernel's count), for the test to
	// judge the samples by: a busy machine gives it less than its seconds
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		fmt.Printf("cpu %d\n", ru.Utime.Nano()+ru.Stime.Nano())
	}
}
