// Command seglog works directly on the data directory of a Kafka-style
// commit log. See README.md and `seglog --help`.
package main

import (
	"os"

	"github.com/seglog/seglog/commands"
)

func main() {
	os.Exit(commands.Run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
