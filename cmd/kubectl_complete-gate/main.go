// Command kubectl_complete-gate is what kubectl (1.26+) runs to complete
// `kubectl gate <TAB>`: it asks kubectl-gate, next to it or on PATH, with
// the hidden __complete command, which answers in kubectl's protocol.
package main

import (
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	bin := "kubectl-gate"
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), bin+filepath.Ext(self)); fileExists(p) {
			bin = p
		}
	}
	cmd := exec.Command(bin, append([]string{"__complete"}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		os.Exit(1) // kubectl then offers no candidates
	}
}

func fileExists(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }
