package main

import (
	"bufio"
	"io"
	"unicode"
)

// countWords counts runs of non-space characters (Unicode white space separates words, as wc -w does),
// streaming, so a file of any size is read in constant memory. Bytes that are not UTF-8 count as
// non-space.
func countWords(r io.Reader) (int, error) {
	reader := bufio.NewReaderSize(r, 64*1024)
	words := 0
	inWord := false
	for {
		ch, _, err := reader.ReadRune()
		if err == io.EOF {
			return words, nil
		}
		if err != nil {
			return words, err
		}
		if unicode.IsSpace(ch) {
			inWord = false
		} else if !inWord {
			inWord = true
			words++
		}
	}
}
