package apivalidation

import (
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/util/parsers"
)

// defaultPullPolicies gives every container of the object's pod template
// that has no imagePullPolicy the one the API server's defaulting would
// give it (k8s.io/kubernetes/pkg/apis/core/v1.SetDefaults_Container:
// Always for an image with the tag "latest" or no tag and no digest,
// IfNotPresent otherwise), before that defaulting runs and skips them.
// Same result, once per image: parsing an image reference is the
// distribution/reference regular expression, the largest single cost of
// the defaulting, and a render names the same few images thousands of
// times. Kinds without a pod template, and pod templates of versions not
// listed here, keep the defaulting's own path.
func defaultPullPolicies(versioned runtime.Object) {
	var spec *corev1.PodSpec
	switch o := versioned.(type) {
	case *corev1.Pod:
		spec = &o.Spec
	case *corev1.PodTemplate:
		spec = &o.Template.Spec
	case *corev1.ReplicationController:
		if o.Spec.Template != nil {
			spec = &o.Spec.Template.Spec
		}
	case *appsv1.Deployment:
		spec = &o.Spec.Template.Spec
	case *appsv1.ReplicaSet:
		spec = &o.Spec.Template.Spec
	case *appsv1.DaemonSet:
		spec = &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		spec = &o.Spec.Template.Spec
	case *batchv1.Job:
		spec = &o.Spec.Template.Spec
	case *batchv1.CronJob:
		spec = &o.Spec.JobTemplate.Spec.Template.Spec
	}
	DefaultPodSpecPullPolicies(spec)
}

// DefaultPodSpecPullPolicies gives every container of spec (nil: none)
// that has no imagePullPolicy the one SetDefaults_Container would give it,
// each image parsed once per process (see defaultPullPolicies). Argo
// Rollouts' ValidateRolloutSpec runs that defaulting on a Rollout's pod
// template; a template given its policies first skips the parse there too.
func DefaultPodSpecPullPolicies(spec *corev1.PodSpec) {
	if spec == nil {
		return
	}
	for i := range spec.InitContainers {
		defaultPullPolicy(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultPullPolicy(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultPullPolicy((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

func defaultPullPolicy(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyOf(c.Image)
	}
}

// pullPolicies caches pullPolicyOf by image, up to maxPullPolicies images
// (a render's distinct images are a few hundred; past the bound an image
// is parsed each time). A plain map under a read lock: a sync.Map's
// lookup, with the image boxed in an interface and hashed as one, cost
// several times the map's.
var (
	pullPolicies   = map[string]corev1.PullPolicy{}
	pullPolicyLock sync.RWMutex
)

const maxPullPolicies = 1 << 14

// pullPolicyOf is SetDefaults_Container's choice for an image.
func pullPolicyOf(image string) corev1.PullPolicy {
	pullPolicyLock.RLock()
	p, ok := pullPolicies[image]
	pullPolicyLock.RUnlock()
	if ok {
		return p
	}
	// Errors are ignored as the defaulting ignores them (the tag is then
	// "", and the policy IfNotPresent).
	_, tag, _, _ := parsers.ParseImageName(image)
	p = corev1.PullIfNotPresent
	if tag == "latest" {
		p = corev1.PullAlways
	}
	pullPolicyLock.Lock()
	if len(pullPolicies) < maxPullPolicies {
		pullPolicies[image] = p
	}
	pullPolicyLock.Unlock()
	return p
}
