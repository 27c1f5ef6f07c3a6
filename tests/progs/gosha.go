// gosha: a Go program hot in assembly without unwind information:
// crypto/sha256's block function (AVX2 where the CPU has it), which uses
// rbp for data after its prologue saved the caller's. Go binaries carry no
// .eh_frame: csampler walks Go's frame pointers, and from such a leaf
// finds the saved record under its return address.
//
// usage: gosha SECONDS
// Prints "ready PID" first and "hashed N" at the end.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func hashLoop(d time.Duration) (int, [32]byte) {
	var sum [32]byte
	buf := make([]byte, 4096)
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); n++ {
		sum = sha256.Sum256(buf)
		buf[0] = sum[0]
	}
	return n, sum
}

func main() {
	secs, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: gosha SECONDS")
		os.Exit(2)
	}
	fmt.Printf("ready %d\n", os.Getpid())
	n, _ := hashLoop(time.Duration(secs * float64(time.Second)))
	fmt.Printf("hashed %d\n", n)
}
