// Command benchgen writes a generated render for benchmarks to stdout.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
)

func main() {
	var o benchgen.Options
	flag.IntVar(&o.Objects, "n", 10000, "objects")
	flag.IntVar(&o.Images, "images", 400, "distinct image repositories")
	flag.StringVar(&o.Registry, "registry", "ghcr.io", "registry host of every image")
	flag.BoolVar(&o.Pinned, "pinned", false, "pin images by digest")
	refs := flag.Bool("refs", false, "print the image references of the render, one a line, instead")
	flag.Parse()
	w := bufio.NewWriter(os.Stdout)
	var err error
	if *refs {
		err = benchgen.WriteRefs(w, o)
	} else {
		err = benchgen.Write(w, o)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
}
