package main

import (
	"io"
	"unicode"
	"unicode/utf8"
)

// countWords counts runs of non-space characters (Unicode white space separates words, as wc -w counts
// them), streaming, so a file of any size is read in constant memory. Bytes that are not UTF-8 count as
// non-space.
func countWords(r io.Reader) (int, error) {
	buf := make([]byte, 64*1024)
	words, inWord, carry := 0, false, 0
	for {
		n, err := r.Read(buf[carry:])
		data := buf[:carry+n]
		end := len(data)
		if err == nil {
			// Leave an incomplete character at the end for the next read.
			end = completeUpTo(data)
		}
		for i := 0; i < end; {
			b := data[i]
			var space bool
			if b < utf8.RuneSelf {
				space = asciiSpace[b]
				i++
			} else {
				ch, size := utf8.DecodeRune(data[i:end])
				space = unicode.IsSpace(ch)
				i += size
			}
			if space {
				inWord = false
			} else if !inWord {
				inWord = true
				words++
			}
		}
		carry = copy(buf, data[end:])
		if err == io.EOF {
			return words, nil
		}
		if err != nil {
			return words, err
		}
	}
}

// completeUpTo is the length of data without a trailing, incomplete UTF-8 sequence.
func completeUpTo(data []byte) int {
	for back := 1; back < utf8.UTFMax && back <= len(data); back++ {
		b := data[len(data)-back]
		if b < utf8.RuneSelf {
			return len(data)
		}
		if utf8.RuneStart(b) {
			if utf8.FullRune(data[len(data)-back:]) {
				return len(data)
			}
			return len(data) - back
		}
	}
	return len(data)
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
