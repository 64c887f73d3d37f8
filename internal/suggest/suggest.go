// Package suggest finds the name a user most likely meant: the "did you
// mean" of usage errors (a misspelt flag, rule id or --exclude-app name).
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns the candidate closest to s within a small edit distance
// (case ignored), or "".
func Closest(s string, candidates []string) string {
	best, bestD := "", 0
	limit := max(2, len(s)/4)
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// Phrase is ` (did you mean "X"?)` or "".
func Phrase(s string, candidates []string) string {
	if m := Closest(s, candidates); m != "" && m != s {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b, with a transposition
// counting as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
