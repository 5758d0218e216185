package commands

import (
	"flag"
	"os"
)

// longFlag turns the crash, concurrency and fault suites from their quick
// CI size into deep runs: go test ./commands -long (or SEGLOG_LONG=1).
var longFlag = flag.Bool("long", false, "run the crash, concurrency and fault suites in their long mode")

// longMode reports whether the suites should run their long mode.
func longMode() bool { return *longFlag || os.Getenv("SEGLOG_LONG") == "1" }
