# The flux CLI, for the Flux parity test (internal/flux: `flux build
# kustomization --dry-run` against the gate's render). Included from the
# top-level Makefile; `make test` builds it into $(TOOLS) and exports FLUX.
#
# Built from the module proxy, in a scratch module: flux2's go.mod carries a
# replace directive, so `go install …@version` refuses it, and cmd/flux embeds
# install manifests that flux2's own Makefile generates and the module does
# not hold. The scratch module replaces flux2 with a copy of its module whose
# cmd/flux/manifests/ holds one placeholder; `flux build` never reads them
# (only `flux install` does).
FLUX_VERSION := v2.9.5
FLUX         := $(TOOLS)/flux-$(FLUX_VERSION)/flux
export FLUX

.PHONY: flux-tools
flux-tools: $(FLUX)

$(TOOLS)/flux-%/flux:
	@echo "building the flux CLI $* (several minutes the first time)"
	rm -rf $(@D) && mkdir -p $(@D)
	src=$$($(GO) mod download -json github.com/fluxcd/flux2/v2@$* | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
		test -n "$$src" && cp -r "$$src" $(@D)/src && chmod -R u+w $(@D)/src
	mkdir -p $(@D)/src/cmd/flux/manifests
	printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n' >$(@D)/src/cmd/flux/manifests/placeholder.yaml
	printf 'module fluxcli\n\ngo 1.26.0\n\nreplace gopkg.in/yaml.v3 => gopkg.in/yaml.v3 v3.0.1\n\nreplace github.com/fluxcd/flux2/v2 => ./src\n\nrequire github.com/fluxcd/flux2/v2 $*\n' >$(@D)/go.mod
	printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/fluxcd/flux2/v2/cmd/flux"\n' >$(@D)/tools.go
	cd $(@D) && $(GO) mod tidy && $(GO) build -o flux.tmp github.com/fluxcd/flux2/v2/cmd/flux && mv flux.tmp flux
