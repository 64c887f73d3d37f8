// Package images finds container images in the pod specs of rendered
// objects and rewrites them.
//
// Pod specs are found in every workload kind (Pod, PodTemplate,
// ReplicationController, ReplicaSet, Deployment, StatefulSet, DaemonSet, Job,
// CronJob, Argo Rollout), in any object with a spec.template.spec or
// spec.jobTemplate.spec.template.spec pod spec, and at configured paths of
// custom kinds. Images are read from containers, initContainers and
// ephemeralContainers.
package images
