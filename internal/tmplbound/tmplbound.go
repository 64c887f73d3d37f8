// Package tmplbound bounds what a Go template may produce from a small
// input: the sprig functions that multiply their input (repeat, until,
// untilStep) refuse a result over the caps before they allocate it, and
// Writer stops a template's output at a byte budget. Helm charts and
// ApplicationSet goTemplates, both written by whoever wrote the pull
// request, render through them (SECURITY.md, "Hostile input is bounded").
package tmplbound

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
)

// MaxSequence bounds the lists until and untilStep return.
const MaxSequence = 1_000_000

// Funcs returns repeat, until and untilStep, as sprig defines them, with
// their results capped: repeat at maxOutput bytes, the others at
// MaxSequence elements. Set them over sprig's.
func Funcs(maxOutput int64) template.FuncMap {
	return template.FuncMap{
		"repeat": func(count int, s string) (string, error) {
			if count > 0 && int64(len(s))*int64(count) > maxOutput {
				return "", fmt.Errorf("repeat: %d × %d bytes is over the output cap of %d bytes", count, len(s), maxOutput)
			}
			return strings.Repeat(s, max(count, 0)), nil
		},
		"until": func(count int) ([]int, error) {
			if count < 0 {
				return untilStep(0, count, -1)
			}
			return untilStep(0, count, 1)
		},
		"untilStep": untilStep,
	}
}

func untilStep(start, stop, step int) ([]int, error) {
	if step == 0 || (step > 0 && start >= stop) || (step < 0 && start <= stop) {
		return []int{}, nil
	}
	n := (int64(stop) - int64(start)) / int64(step)
	if n < 0 {
		n = -n
	}
	if n > MaxSequence {
		return nil, fmt.Errorf("until: %d elements are over the cap of %d", n, MaxSequence)
	}
	out := make([]int, 0, n+1)
	if step > 0 {
		for i := start; i < stop; i += step {
			out = append(out, i)
		}
	} else {
		for i := start; i > stop; i += step {
			out = append(out, i)
		}
	}
	return out, nil
}

// ErrOverBudget is the error a Writer returns once its budget is spent.
var ErrOverBudget = errors.New("template output over its cap")

// Writer collects a template's output up to Budget bytes; a write past it
// fails with ErrOverBudget, which stops the template.
type Writer struct {
	strings.Builder
	Budget int64
}

func (w *Writer) Write(p []byte) (int, error) {
	if int64(w.Len())+int64(len(p)) > w.Budget {
		return 0, ErrOverBudget
	}
	return w.Builder.Write(p)
}
