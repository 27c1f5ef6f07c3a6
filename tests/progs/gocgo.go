// gocgo: built with gochan.go (go build gochan.go gocgo.go), it makes
// gochan a cgo program, linked by the C toolchain as most Go programs that
// use the C library are: its binary has a CFI table (.eh_frame_hdr) for
// its C code only, and its goroutines' g is in the C library's thread
// storage, not in m.tls.
package main

// int gocgo_twice(int x) { return 2 * x; }
import "C"

var gocgoSink C.int

func init() { gocgoSink = C.gocgo_twice(21) }
