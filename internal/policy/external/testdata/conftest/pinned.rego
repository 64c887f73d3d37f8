package main

import rego.v1

deny contains msg if {
	input.kind == "Deployment"
	some c in input.spec.template.spec.containers
	not contains(c.image, "@sha256:")
	msg := sprintf("Deployment %s: image %s is not pinned by digest", [input.metadata.name, c.image])
}
