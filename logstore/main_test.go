package logstore_test

import (
	"os"
	"testing"

	"github.com/seglog/seglog/internal/testcheckout"
)

// TestMain fails the tests if they changed the checkout (unless told to
// rewrite the golden partitions).
func TestMain(m *testing.M) { os.Exit(testcheckout.Run(m, *goldenUpdate)) }
