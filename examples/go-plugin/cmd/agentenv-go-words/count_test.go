package main

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestCountWords(t *testing.T) {
	cases := map[string]int{
		"":                          0,
		"   \n\t ":                  0,
		"one":                       1,
		" one  two\tthree\nfour ":   4,
		"héllo wörld":               2,
		"a\u00a0b\u2003c\u3000d":    4, // no-break, em and ideographic spaces separate words
		"日本語のテキスト":                  1,
		"bad \xff\xfe bytes":        3,
		"end with no newline":       4,
		strings.Repeat("ab ", 1e5):  1e5,
		strings.Repeat("é ", 70000): 70000,
	}
	for text, want := range cases {
		// Whole, and one byte at a time (multi-byte characters split across reads).
		for _, r := range []io.Reader{strings.NewReader(text), iotest.OneByteReader(strings.NewReader(text))} {
			got, err := countWords(r)
			if err != nil || got != want {
				t.Errorf("countWords(%.30q) = %d, %v; want %d", text, got, err, want)
			}
		}
	}
}

func TestCountWordsReportsReadErrors(t *testing.T) {
	if _, err := countWords(iotest.ErrReader(io.ErrUnexpectedEOF)); err != io.ErrUnexpectedEOF {
		t.Fatalf("got %v", err)
	}
}
