package main

import "testing"

// The committed fixtures still say what their manifest says: nothing
// edited them by hand since gen wrote them. Needs no kcat.
func TestFixturesMatchManifest(t *testing.T) {
	if err := check(".."); err != nil {
		t.Fatalf("%v\n(rebuild: go run ./testdata/kafka/gen)", err)
	}
}
