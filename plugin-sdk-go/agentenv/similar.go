package agentenv

// The likeness of two words, as Python's difflib.SequenceMatcher.ratio measures it (twice the characters
// of the recursively found longest common blocks over both lengths), for the "did you mean" of a
// misspelled config key. agent-env and the other SDKs use the same measure and the same cutoff.

// similarityCutoff is how alike a key must be to one the store takes to be named as meant.
const similarityCutoff = 0.75

// similarity is 2·matched / (len(a) + len(b)), counted in characters; 1 for two empty words.
func similarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	total := len(ra) + len(rb)
	if total == 0 {
		return 1
	}
	return 2 * float64(matchedRunes(ra, rb)) / float64(total)
}

// matchedRunes counts the characters of the longest common block, then of the blocks left and right of it.
func matchedRunes(a, b []rune) int {
	i, j, k := longestBlock(a, b)
	if k == 0 {
		return 0
	}
	return k + matchedRunes(a[:i], b[:j]) + matchedRunes(a[i+k:], b[j+k:])
}

// longestBlock is the longest common block (i, j, k), the earliest in a and then in b among the longest.
func longestBlock(a, b []rune) (int, int, int) {
	bi, bj, bk := 0, 0, 0
	previous := make([]int, len(b)+1)
	for i, ca := range a {
		current := make([]int, len(b)+1)
		for j, cb := range b {
			if ca == cb {
				k := previous[j] + 1
				current[j+1] = k
				if k > bk {
					bi, bj, bk = i+1-k, j+1-k, k
				}
			}
		}
		previous = current
	}
	return bi, bj, bk
}

// closestKey is the key of takes most like key at the cutoff, and whether there is one (ties: the first).
func closestKey(key string, takes []string) (string, bool) {
	best, bestScore := "", 0.0
	for _, candidate := range takes {
		if score := similarity(candidate, key); score >= similarityCutoff && score > bestScore {
			best, bestScore = candidate, score
		}
	}
	return best, best != ""
}
