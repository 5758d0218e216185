package format

import (
	"os"
	"testing"

	"github.com/seglog/seglog/internal/testcheckout"
)

// TestMain fails the tests if they changed the checkout.
func TestMain(m *testing.M) { os.Exit(testcheckout.Run(m, false)) }
