// Command render writes the krew plugin manifest from its template and the
// archives' checksums (make krew-manifest):
//
//	go run ./krew/render -template krew/gate.yaml.tmpl -version v0.1.0 \
//	    -base-url https://github.com/kubectl-gate/kubectl-gate/releases/download/v0.1.0 \
//	    -checksums dist/checksums.txt -out krew/gate.yaml
//
// It fails, writing nothing, when a platform's archive has no checksum.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/krew"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "krew/render:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	tmpl := fs.String("template", "krew/gate.yaml.tmpl", "manifest template")
	version := fs.String("version", "", "plugin version (vX.Y.Z)")
	baseURL := fs.String("base-url", "", "URL the archives are downloaded from (archive names are appended; default: the GitHub release of -version)")
	checksums := fs.String("checksums", "dist/checksums.txt", "sha256sum output for the archives")
	out := fs.String("out", "-", "output file (- for stdout)")
	goVersion := fs.String("go-version", runtime.Version(), "toolchain that built the archives (recorded in a comment)")
	platforms := fs.String("platforms", "", "os/arch,... (default: all release platforms)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	t, err := os.ReadFile(*tmpl)
	if err != nil {
		return err
	}
	f, err := os.Open(*checksums)
	if err != nil {
		return err
	}
	sums, err := krew.ParseChecksums(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", *checksums, err)
	}
	if *baseURL == "" {
		*baseURL = krew.ReleaseURL + *version
	}
	o := krew.Options{Template: t, Version: *version, BaseURL: *baseURL, GoVersion: *goVersion, Checksums: sums}
	if *platforms != "" {
		if o.Platforms, err = krew.ParsePlatforms(*platforms); err != nil {
			return err
		}
	}
	b, err := krew.Render(o)
	if err != nil {
		return err
	}
	if *out == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	// Write beside the target and rename: a failure never leaves half a manifest.
	tmp, err := os.CreateTemp(filepath.Dir(*out), "."+strings.TrimSuffix(filepath.Base(*out), ".yaml")+"-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), *out)
}
