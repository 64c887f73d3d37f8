package images

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Lock fires on an image the image lock does not hold: the lock is what
// pin resolved (and verified), checked with no registry call.
var Lock = rules.Rule{
	ID: "image-lock", Default: finding.SeverityError, Family: "images", MayNoVerdict: true,
	Doc:      "an image lock is given (--lock, spec.images.lock, an ImageLock in the render) and an image's digest is not the one it holds for that repository, its tag is locked to another digest, or it is missing from the lock",
	Outage:   "a digest nobody resolved or verified reaches the cluster: a hand-edited pin, a tag moved behind the lock's back",
	Fix:      "pin again and commit the lock with the render: kubectl gate pin --write-lock FILE (with --key or --certificate-identity to verify signers); or set the image back to the digest the lock holds",
	Mutation: "change a locked image's digest",
	Reads:    []string{imagelock.Kind},
	Check:    checkImageLock,
	Mutants: []rules.Mutant{
		{Name: "pin a locked image to another digest", Apply: lockedOnly(rewriteFirstImage(func(r images.Ref) string {
			return r.Name + "@sha256:" + otherDigest(r.Digest)
		}))},
	},
}

// LockUnused fires on a lock entry no image of the render uses.
var LockUnused = rules.Rule{
	ID: "image-lock-unused", Default: finding.SeverityWarning, Family: "images",
	Doc:    "an image lock entry names an image and digest no image of the render uses",
	Outage: "a stale lock keeps approving a digest the render stopped using, so its return would pass unseen",
	Fix:    "pin again with --write-lock, which writes only the images the render uses, or delete the entry",
	Reads:  []string{imagelock.Kind},
	Check:  checkImageLockUnused,
}

// lockResult is the lock check of one render, shared by both rules.
type lockResult struct {
	findings []finding.Finding // image-lock
	unused   []finding.Finding // image-lock-unused
}

func checkImageLock(c *rules.Context) []finding.Finding {
	return rules.Memo(c, "imagelock", func() lockResult { return checkLocks(c) }).findings
}

func checkImageLockUnused(c *rules.Context) []finding.Finding {
	return rules.Memo(c, "imagelock", func() lockResult { return checkLocks(c) }).unused
}

// lockSource is one lock of the run and where its findings go: the
// ImageLock object of the render, or the file spec.images.lock named.
type lockSource struct {
	imagelock.Source
	obj  *yaml.RNode
	file string
}

func checkLocks(c *rules.Context) lockResult {
	if c.Pinning {
		return lockResult{} // pin writes a lock (--write-lock); it holds the render to none
	}
	sources, out := locks(c)
	if len(sources) == 0 {
		return out
	}
	srcs := make([]imagelock.Source, len(sources))
	for i, s := range sources {
		srcs[i] = s.Source
	}
	ix := imagelock.NewIndex(srcs...)
	for _, conflict := range ix.Conflicts() {
		out.findings = append(out.findings, finding.Finding{Severity: finding.SeverityError, Message: "the image locks disagree: " + conflict})
	}
	eachImage(c, func(w workloadImage) {
		if !w.ok {
			return
		}
		p, ok := ix.Check(w.c.Image)
		if ok {
			return
		}
		f := imageFinding("image-lock", finding.SeverityError, w, "%s: %s", w.c.Describe(), p.Message)
		if p.Proposed != "" {
			f.Field.ProposedValue = p.Proposed
		}
		out.findings = append(out.findings, f)
	})
	for _, u := range ix.Unused() {
		out.unused = append(out.unused, unusedFinding(sources, u))
	}
	return out
}

// locks gathers the run's locks: spec.images.lock (read by the shell) and
// every ImageLock object of the render. A lock that cannot be read is no
// verdict.
func locks(c *rules.Context) ([]lockSource, lockResult) {
	var (
		out []lockSource
		res lockResult
	)
	noVerdict := func(f finding.Finding) {
		f.NoVerdict = true
		res.findings = append(res.findings, f)
	}
	if l := c.Config.Images.Lock; l != nil {
		name := "spec.images.lock"
		if l.Path != "" {
			name = l.Path
		}
		lock, err := c.Config.Images.ImageLock()
		switch {
		case err != nil:
			noVerdict(finding.Finding{Severity: finding.SeverityError, Message: fmt.Sprintf("reading the image lock %s: %v", name, err)})
		case lock == nil:
			noVerdict(finding.Finding{Severity: finding.SeverityError, Message: fmt.Sprintf("the image lock %s was not read: the KRM function reads no files; write the ImageLock inline in spec.images.lock or keep it in the render", name)})
		default:
			out = append(out, lockSource{Source: imagelock.Source{Name: name, Lock: lock}, file: l.Path})
		}
	}
	for _, r := range c.Resources {
		if manifest.APIVersion(r) != imagelock.APIVersion || manifest.Kind(r) != imagelock.Kind {
			continue
		}
		name := "ImageLock " + manifest.Name(r)
		s, err := r.String()
		var lock *imagelock.Lock
		if err == nil {
			lock, err = imagelock.Parse([]byte(s))
		}
		if err != nil {
			f := manifest.Finding("image-lock", finding.SeverityError, r, "", nil, "reading %s: %v", name, err)
			noVerdict(f)
			continue
		}
		out = append(out, lockSource{Source: imagelock.Source{Name: name, Lock: lock}, obj: r})
	}
	return out, res
}

func unusedFinding(sources []lockSource, u imagelock.Unused) finding.Finding {
	msg := fmt.Sprintf("%s locks %s to %s, and no image of the render uses it", u.Source, u.Image, u.Digest)
	path := fmt.Sprintf("spec.images[%d]", u.Place)
	for _, s := range sources {
		if s.Name != u.Source {
			continue
		}
		if s.obj != nil {
			return manifest.Finding("image-lock-unused", finding.SeverityWarning, s.obj, path, u.Image, "%s", msg)
		}
		f := finding.Finding{Severity: finding.SeverityWarning, Message: msg, Field: &finding.Field{Path: path, CurrentValue: u.Image}}
		if s.file != "" {
			f.File = &finding.File{Path: s.file}
		}
		return f
	}
	return finding.Finding{Severity: finding.SeverityWarning, Message: msg}
}

// lockedOnly applies a mutant only when the run holds the render to a lock.
func lockedOnly(apply func(*rules.Subject) bool) func(*rules.Subject) bool {
	return func(s *rules.Subject) bool {
		if s.Config.Images.Lock == nil && !hasLockObject(s.Resources) {
			return false
		}
		return apply(s)
	}
}

func hasLockObject(rs []*yaml.RNode) bool {
	for _, r := range rs {
		if manifest.APIVersion(r) == imagelock.APIVersion && manifest.Kind(r) == imagelock.Kind {
			return true
		}
	}
	return false
}

// otherDigest returns 64 hex digits that differ from digest's.
func otherDigest(digest string) string {
	hex := "0000000000000000000000000000000000000000000000000000000000000000"
	if len(digest) == len("sha256:")+64 && digest[len("sha256:"):] == hex {
		return "1111111111111111111111111111111111111111111111111111111111111111"
	}
	return hex
}
