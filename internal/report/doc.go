// Package report prints a gate Report in the output formats the README lists:
// text (colored only on a TTY), json, yaml, sarif, junit and github workflow
// commands.
package report
