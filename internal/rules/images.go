package rules

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
)

var imageRules = []Rule{
	{
		ID: "image-digest", Default: SeverityError, Family: "images",
		Doc:      "an image has no @sha256: digest (a tag, :latest, or no tag at all); nginx:1.27@sha256:… passes",
		Outage:   "a tag moves after the gate passed, and the cluster runs something nobody checked",
		Mutation: "replace a digest by :latest",
		Check:    checkImageDigest,
	},
	{
		ID: "image-resolve", Default: SeverityError, Family: "images",
		Doc:      "pin/verify could not resolve or find a reference (not found, unauthorized, registry down, timeout): no verdict, exit 3",
		Outage:   "a digest that does not exist fails at pull time, mid-rollout",
		Mutation: "point a digest at an image the registry does not hold",
		Check:    checkImageResolve,
	},
	{
		ID: "image-digest-stale", Default: SeverityWarning, Family: "images",
		Doc:      "verify: the tag now points to a different digest than the one pinned",
		Outage:   "the pinned digest is no longer what the tag means: a fix or a CVE patch is not deployed",
		Mutation: "pin a digest other than the tag's",
		Check:    checkImageStale,
	},
	{
		ID: "image-registry", Default: SeverityError, Family: "images",
		Doc:      "images.allowedRegistries is set and an image comes from another registry",
		Outage:   "an image from an unvetted registry reaches production",
		Mutation: "move an image to another registry",
		Check:    checkImageRegistry,
	},
	{
		ID: "image-pinned-by", Default: SeverityError, Family: "images",
		Doc:      "--require-pinned-by: a workload lacks the kubectl-gate.dev/pinned stamp of the Pin transformer (the KRM step did not run)",
		Outage:   "exec functions are skipped silently without --enable-exec, and an unpinned render ships",
		Mutation: "remove the pinned stamp",
		Check:    checkPinnedBy,
	},
}

// workloadImage is one image of one object, parsed.
type workloadImage struct {
	obj *yaml.RNode
	c   images.Container
	ref images.Ref
	ok  bool
}

// eachImage calls fn for every image of every object that is applied. The
// images are found and parsed once per run, however many rules ask.
func eachImage(c *Context, fn func(w workloadImage)) {
	for _, w := range memo(c, "images", func() []workloadImage { return findImages(c) }) {
		fn(w)
	}
}

func findImages(c *Context) []workloadImage {
	extra := PodSpecPaths(c.Config)
	parsed := map[string]images.Ref{}
	valid := map[string]bool{}
	var out []workloadImage
	for _, obj := range c.Resources {
		if IsLocalConfig(obj) {
			continue
		}
		for _, ct := range images.Find(obj, extra) {
			ref, seen := parsed[ct.Image]
			if !seen {
				ref, valid[ct.Image] = images.Parse(ct.Image)
				parsed[ct.Image] = ref
			}
			out = append(out, workloadImage{obj: obj, c: ct, ref: ref, ok: valid[ct.Image]})
		}
	}
	return out
}

// PodSpecPaths converts the configured extra pod spec paths.
func PodSpecPaths(s *config.Spec) []images.PodSpecPath {
	out := make([]images.PodSpecPath, len(s.Images.PodSpecPaths))
	for i, p := range s.Images.PodSpecPaths {
		out[i] = images.PodSpecPath{Kind: p.Kind, Path: p.Path}
	}
	return out
}

func imageFinding(rule string, sev Severity, w workloadImage, format string, args ...any) Finding {
	f := finding(rule, sev, w.obj, w.c.Path, w.c.Image, format, args...)
	if kust := ImageSetBy(w.obj, w.ref.Repository()); kust != "" {
		f.File = &File{Path: kust}
		f.Message += fmt.Sprintf(" (image set by %s `images:`)", kust)
	}
	return f
}

func checkImageDigest(c *Context) []Finding {
	if c.Config.Images.Digest == config.DigestOff {
		return nil
	}
	var out []Finding
	eachImage(c, func(w workloadImage) {
		switch {
		case !w.ok:
			out = append(out, imageFinding("image-digest", SeverityError, w, "container %q: %q is not a valid image reference", w.c.Name, w.c.Image))
		case w.ref.HasDigest() && !w.ref.ValidDigest():
			out = append(out, imageFinding("image-digest", SeverityError, w, "container %q: image %q has a malformed digest", w.c.Name, w.c.Image))
		case !w.ref.HasDigest():
			if c.Pinning && c.Resolutions[w.c.Image].Err != nil {
				return // image-resolve reports why it could not be pinned
			}
			what := "tag " + w.ref.Tag
			if w.ref.Tag == "" {
				what = "no tag (implicit latest)"
			}
			out = append(out, imageFinding("image-digest", SeverityError, w, "container %q: image %q is not pinned by digest (%s)", w.c.Name, w.c.Image, what))
		}
	})
	return out
}

func checkImageResolve(c *Context) []Finding {
	if c.Resolutions == nil {
		return nil
	}
	verify := c.Config.Images.Digest == config.DigestVerify
	var out []Finding
	seen := map[string]bool{}
	eachImage(c, func(w workloadImage) {
		if !w.ok || (w.ref.HasDigest() && !w.ref.ValidDigest()) {
			return
		}
		// Asked of the registry: with pin, every image still without a
		// digest (pinning it failed); with verify, every digest.
		if (!w.ref.HasDigest() && !c.Pinning) || (w.ref.HasDigest() && !verify) {
			return
		}
		res, asked := c.Resolutions[w.c.Image]
		if asked && res.Err == nil {
			return
		}
		key := w.c.Image + "\x00" + Ref(w.obj).String()
		if seen[key] {
			return
		}
		seen[key] = true
		why := "the resolver gave no answer"
		if res.Err != nil {
			why = res.Err.Error()
		}
		f := imageFinding("image-resolve", SeverityError, w, "container %q: %s", w.c.Name, why)
		f.NoVerdict = true
		out = append(out, f)
	})
	return out
}

func checkImageStale(c *Context) []Finding {
	if c.Resolutions == nil || c.Config.Images.Digest != config.DigestVerify {
		return nil
	}
	var out []Finding
	eachImage(c, func(w workloadImage) {
		if !w.ok || !w.ref.ValidDigest() || w.ref.Tag == "" {
			return
		}
		res, ok := c.Resolutions[w.ref.Name]
		if !ok || res.Err != nil || res.Digest == w.ref.Digest {
			return
		}
		f := imageFinding("image-digest-stale", SeverityWarning, w, "container %q: tag %s now points to %s, not the pinned %s", w.c.Name, w.ref.Name, res.Digest, w.ref.Digest)
		f.Field.ProposedValue = w.ref.WithDigest(res.Digest, false)
		out = append(out, f)
	})
	return out
}

func checkImageRegistry(c *Context) []Finding {
	allowed := c.Config.Images.AllowedRegistries
	if len(allowed) == 0 {
		return nil
	}
	norm := make([]string, len(allowed))
	for i, a := range allowed {
		norm[i] = images.NormalizeRegistry(a)
	}
	var out []Finding
	eachImage(c, func(w workloadImage) {
		if w.ok && !slices.Contains(norm, images.NormalizeRegistry(w.ref.Registry)) {
			out = append(out, imageFinding("image-registry", SeverityError, w, "container %q: registry %s is not in allowedRegistries %v", w.c.Name, w.ref.Registry, allowed))
		}
	})
	return out
}

func checkPinnedBy(c *Context) []Finding {
	if !c.RequirePinnedBy {
		return nil
	}
	var out []Finding
	done := map[*yaml.RNode]bool{}
	eachImage(c, func(w workloadImage) {
		if done[w.obj] || w.obj.GetAnnotations()[AnnoPinned] != "" {
			return
		}
		done[w.obj] = true
		out = append(out, finding("image-pinned-by", SeverityError, w.obj, "metadata.annotations", nil,
			"workload has no %s annotation: the Pin transformer did not run on it (exec functions are skipped without --enable-exec)", AnnoPinned))
	})
	return out
}
