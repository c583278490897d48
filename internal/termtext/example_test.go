package termtext_test

import (
	"fmt"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
)

func ExampleOneLine() {
	// A directory name that would clear the screen, and a question with a
	// line break, as an agent might write them.
	fmt.Println(termtext.OneLine("node \x1b[2J\x1b[31mEVIL is dead", 0))
	fmt.Println(termtext.OneLine("merge now?\n  (y/n)", 0))
	// Output:
	// node �[2J�[31mEVIL is dead
	// merge now? (y/n)
}
