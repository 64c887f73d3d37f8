package krew

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/template"
)

// ReleaseURL is where the release archives of a version are downloaded
// from: ReleaseURL + version.
const ReleaseURL = "https://github.com/kubectl-gate/kubectl-gate/releases/download/"

// Platform is one os/arch the plugin ships for.
type Platform struct{ OS, Arch string }

// Platforms are the release platforms, in manifest order.
var Platforms = []Platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Archive is the release archive's file name.
func (p Platform) Archive() string { return "kubectl-gate_" + p.OS + "_" + p.Arch + ".tar.gz" }

// Bin is the binary's name inside the archive.
func (p Platform) Bin() string {
	if p.OS == "windows" {
		return "kubectl-gate.exe"
	}
	return "kubectl-gate"
}

// CompletionBin is the name, inside the archive, of the executable kubectl
// (1.26+) runs to complete `kubectl gate <TAB>`: kubectl_complete-gate.
func (p Platform) CompletionBin() string {
	if p.OS == "windows" {
		return "kubectl_complete-gate.exe"
	}
	return "kubectl_complete-gate"
}

// ParsePlatforms reads "os/arch,os/arch".
func ParsePlatforms(s string) ([]Platform, error) {
	var ps []Platform
	for _, f := range strings.Split(s, ",") {
		os, arch, ok := strings.Cut(strings.TrimSpace(f), "/")
		if !ok || os == "" || arch == "" {
			return nil, fmt.Errorf("platform %q: want os/arch", f)
		}
		ps = append(ps, Platform{os, arch})
	}
	return ps, nil
}

// Options is what Render needs.
type Options struct {
	Template  []byte
	Version   string            // semver with a leading v, as krew requires
	BaseURL   string            // the archives are at BaseURL/<archive>
	GoVersion string            // the toolchain that built the archives
	Checksums map[string]string // archive file name -> sha256 (hex)
	Platforms []Platform        // nil: Platforms
}

var (
	semverRE = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	sha256RE = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

type platformData struct{ OS, Arch, URI, SHA256, Bin, CompletionBin string }

// Render executes the template. It fails on a version krew cannot parse, on
// a platform whose archive has no valid checksum, and on a template that
// names a missing field.
func Render(o Options) ([]byte, error) {
	if !semverRE.MatchString(o.Version) {
		return nil, fmt.Errorf("version %q is not a semantic version with a leading v (krew requires one)", o.Version)
	}
	if !strings.HasPrefix(o.BaseURL, "https://") && !strings.HasPrefix(o.BaseURL, "http://") {
		return nil, fmt.Errorf("base URL %q: want http:// or https://", o.BaseURL)
	}
	if o.GoVersion == "" {
		return nil, fmt.Errorf("no Go version")
	}
	ps := o.Platforms
	if ps == nil {
		ps = Platforms
	}
	var data []platformData
	for _, p := range ps {
		sum, ok := o.Checksums[p.Archive()]
		if !ok {
			return nil, fmt.Errorf("no checksum for %s (%s/%s): build it with make dist", p.Archive(), p.OS, p.Arch)
		}
		if !sha256RE.MatchString(sum) {
			return nil, fmt.Errorf("checksum %q for %s is not a sha256", sum, p.Archive())
		}
		data = append(data, platformData{p.OS, p.Arch, strings.TrimSuffix(o.BaseURL, "/") + "/" + p.Archive(), sum, p.Bin(), p.CompletionBin()})
	}
	t, err := template.New("gate.yaml").Option("missingkey=error").Parse(string(o.Template))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, struct {
		Version, GoVersion string
		Platforms          []platformData
	}{o.Version, o.GoVersion, data})
	return b.Bytes(), err
}

// ParseChecksums reads sha256sum output: "<hex>  <name>" (or "<hex> *<name>").
func ParseChecksums(r io.Reader) (map[string]string, error) {
	sums := map[string]string{}
	s := bufio.NewScanner(r)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimSpace(name), "*")
		if !ok || name == "" || !sha256RE.MatchString(sum) {
			return nil, fmt.Errorf("checksums line %d: want \"<sha256>  <file>\", got %q", n, line)
		}
		if old, dup := sums[name]; dup && old != sum {
			return nil, fmt.Errorf("checksums line %d: two checksums for %s", n, name)
		}
		sums[name] = sum
	}
	return sums, s.Err()
}
