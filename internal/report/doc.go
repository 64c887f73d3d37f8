// Package report prints a gate Report in the output formats of SPEC §8:
// text (colored only on a TTY), json, yaml, sarif, junit and github workflow
// commands.
package report
