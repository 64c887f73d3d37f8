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
	apps := flag.Int("apps", 0, "write an Argo CD estate of this many Applications, each deploying -n objects, under -estate DIR instead")
	estate := flag.String("estate", "", "the directory -apps writes (check it with -f DIR/apps --apps-root DIR --repo-url "+benchgen.EstateRepo+")")
	flag.Parse()
	if *apps > 0 {
		if *estate == "" {
			fmt.Fprintln(os.Stderr, "benchgen: -apps needs -estate DIR")
			os.Exit(2)
		}
		if err := benchgen.WriteEstate(*estate, *apps, o); err != nil {
			fmt.Fprintln(os.Stderr, "benchgen:", err)
			os.Exit(1)
		}
		return
	}
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
