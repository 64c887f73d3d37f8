# The conftest peer of kubectl-gate's image-digest rule, for `make bench`:
# deny every image without a well-formed @sha256: digest, in the pod spec
# locations the gate reads (the image rules, README "Rules"): containers, initContainers and
# ephemeralContainers of a Pod's spec, a PodTemplate's template.spec, and
# spec.template.spec / spec.jobTemplate.spec.template.spec of any kind
# (Deployment, StatefulSet, DaemonSet, ReplicaSet, RC, Job, CronJob, Rollout,
# and custom kinds with a pod template in the usual place).
package main

import rego.v1

pod_specs contains spec if {
	input.kind == "Pod"
	spec := input.spec
}

pod_specs contains spec if {
	input.kind == "PodTemplate"
	spec := input.template.spec
}

pod_specs contains spec if {
	spec := input.spec.template.spec
}

pod_specs contains spec if {
	spec := input.spec.jobTemplate.spec.template.spec
}

deny contains msg if {
	some spec in pod_specs
	some list in ["initContainers", "containers", "ephemeralContainers"]
	some c in spec[list]
	not pinned(c.image)
	msg := sprintf("%s/%s (ns %s) %s: image %q is not pinned by digest", [input.kind, input.metadata.name, object.get(input.metadata, "namespace", ""), c.name, c.image])
}

pinned(image) if regex.match(`@sha256:[0-9a-f]{64}$`, image)
