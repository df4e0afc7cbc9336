// Package forms pins every definition form the Go extractor takes.
package forms

/* A block comment
   over two lines. */

// Free is a free function; Go doc comments are plain comments.
func Free(a int) int {
	return a // trailing comment keeps the line code
}

type Server struct{ n int }

// Serve has a pointer receiver and a multi-line signature.
func (s *Server) Serve(
	network string,
	address string,
) error {
	return nil
}

func (s Server) Count() int {
	return s.n
}

var assigned = func(b int) int {
	return b
}

func Outer() {
	nested := func(c int) int {
		return c
	}
	_ = nested
	const raw = `
// not a comment: a raw string
`
	_ = raw
}

func Generic[T any](v T) T {
	return v
}

func declared(x int) int // implemented in assembly: no body

type Shape interface {
	Area() float64
}
