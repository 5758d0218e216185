// Command gendocs writes seglog's man pages and shell completion scripts
// from the command definitions. Run it with `go generate ./...`; it writes
// to ../man and ../completions relative to commands/.
package main

import (
	"fmt"
	"os"

	"github.com/seglog/seglog/commands"
)

func main() {
	if err := commands.GenerateDocs("../man", "../completions"); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
