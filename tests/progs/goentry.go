// goentry: a Go program whose main goroutine spins forever on the first
// instruction of an assembly function (goentry_amd64.s), its return
// address at [sp] and rbp still its caller's; tests/integration/
// unwind_go_switch.sh builds it in a directory of its own with that file.
// usage: goentry SECONDS (then it exits 0)
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// spinAtEntry never returns: its first instruction jumps to itself.
func spinAtEntry()

//go:noinline
func spinCaller() {
	spinAtEntry()
}

func main() {
	secs := 2
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil && n > 0 {
			secs = n
		}
	}
	fmt.Printf("ready %d\n", os.Getpid())
	go func() {
		time.Sleep(time.Duration(secs) * time.Second)
		os.Exit(0)
	}()
	spinCaller()
}
