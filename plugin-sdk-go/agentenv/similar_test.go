package agentenv

import (
	"math"
	"testing"
)

func TestSimilarityMatchesDifflib(t *testing.T) {
	// difflib.SequenceMatcher(None, a, b).ratio() for these pairs.
	cases := []struct {
		a, b string
		want float64
	}{
		{"plugins", "plugin", 12.0 / 13.0},
		{"impls", "implz", 0.8},
		{"abcd", "bcda", 0.75},
		{"", "", 1},
		{"abc", "xyz", 0},
	}
	for _, c := range cases {
		if got := similarity(c.a, c.b); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("similarity(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if got, ok := closestKey("rooot", []string{"bucket", "root"}); !ok || got != "root" {
		t.Errorf("closestKey(rooot) = %q, %v", got, ok)
	}
	if _, ok := closestKey("compress", []string{"bucket", "root"}); ok {
		t.Error("compress should be like none of the keys")
	}
}
