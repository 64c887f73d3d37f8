# Distribution: release archives, the krew manifest, the KRM function's
# binaries and the Dockerfile lint. Included by the Makefile
# (`-include .ci/dist.mk`); uses its GO, LDFLAGS, VERSION and TOOLS.
#
#   make dist VERSION=v0.1.0           dist/kubectl-gate_<os>_<arch>.tar.gz (binary, kubectl_complete-gate, LICENSE)
#                                      for linux/darwin/windows x amd64/arm64, dist/checksums.txt
#   make krew-manifest VERSION=v0.1.0  krew/gate.yaml from krew/gate.yaml.tmpl and the checksums
#                                      (KREW_BASE_URL overrides where the archives are downloaded)
#   make dist-fn                       dist/gate-fn_linux_{amd64,arm64}: the static binaries the
#                                      Dockerfile builds, for testing the image's entrypoint contract
#   make krew-tools                    krew and validate-krew-manifest $(KREW_VERSION) in $(KREW_DIR)
#   make dockerfilelint                dockerfilelint $(DOCKERFILELINT_VERSION) (npm) in $(TOOLS)
#   make dist-tools                    both: what the tests in krew/ need
#   make lint-dockerfile               dockerfilelint on the Dockerfile
#   make dist-check                    the krew/ tests on dist/ as built: all six platforms through
#                                      validate-krew-manifest (make test checks the host's only)
#
# The archives are reproducible: the same tree, VERSION and Go toolchain give
# the same bytes in any directory (-trimpath, -buildvcs=false, no cgo; GNU tar
# with fixed order, modes, times and owners; gzip -n). krew/gate.yaml records
# the Go toolchain it was rendered with.

# Including this file must not change the Makefile's default goal.
_dist_default_goal := $(.DEFAULT_GOAL)

DIST           ?= $(CURDIR)/dist
DIST_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
FN_PLATFORMS   := linux/amd64 linux/arm64
DIST_ARCHIVES  := $(foreach p,$(DIST_PLATFORMS),$(DIST)/kubectl-gate_$(subst /,_,$(p)).tar.gz)
DIST_FN_BINS   := $(foreach p,$(FN_PLATFORMS),$(DIST)/gate-fn_$(subst /,_,$(p)))
DIST_SRCS      := $(shell find cmd plugin fn internal -name '*.go' -not -name '*_test.go') go.mod go.sum

KREW_VERSION           := v0.4.3
KREW_DIR               := $(TOOLS)/krew-$(KREW_VERSION)
KREW                   := $(KREW_DIR)/krew
VALIDATE_KREW_MANIFEST := $(KREW_DIR)/validate-krew-manifest
KREW_BASE_URL          ?= https://github.com/kubectl-gate/kubectl-gate/releases/download/$(VERSION)

DOCKERFILELINT_VERSION := 1.8.0
DOCKERFILELINT         := $(TOOLS)/dockerfilelint-$(DOCKERFILELINT_VERSION)/node_modules/.bin/dockerfilelint

# The krew tests (krew/) read these; GATE_DIST is where they look for archives.
GATE_DIST := $(DIST)
export KREW VALIDATE_KREW_MANIFEST DOCKERFILELINT GATE_DIST

.PHONY: dist dist-fn dist-check krew-manifest krew-tools dockerfilelint dist-tools lint-dockerfile

# Everything the tests in krew/ need installed (make test depends on it).
dist-tools: krew-tools dockerfilelint

dist: $(DIST)/checksums.txt

dist-fn: $(DIST_FN_BINS)

# The version is baked into the binaries, so a change of VERSION must rebuild
# them: the stamp is rewritten only when it differs.
$(DIST)/.version: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = '$(VERSION)' ] || printf '%s\n' '$(VERSION)' > $@

# $* is os_arch. The binary and LICENSE are staged in a directory of their own
# and packed with fixed names, order, modes, times and owners (--sort=name
# sorts directory contents only: the names are given in byte order).
$(DIST)/kubectl-gate_%.tar.gz: $(DIST_SRCS) LICENSE .ci/dist.mk $(DIST)/.version
	@set -euo pipefail; \
	os=$(word 1,$(subst _, ,$*)); arch=$(word 2,$(subst _, ,$*)); \
	exe=kubectl-gate$$([ $$os = windows ] && echo .exe || true); \
	stage=$(DIST)/.stage/$*; rm -rf $$stage; mkdir -p $$stage; \
	echo "dist: $$os/$$arch"; \
	comp=kubectl_complete-gate$$([ $$os = windows ] && echo .exe || true); \
	CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=false \
		-ldflags "$(LDFLAGS)" -o $$stage/$$exe ./cmd/kubectl-gate; \
	CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=false \
		-ldflags "$(LDFLAGS)" -o $$stage/$$comp ./cmd/kubectl_complete-gate; \
	cp LICENSE $$stage/LICENSE; \
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
		--mode='u=rwX,go=rX' -C $$stage -cf - LICENSE $$exe $$comp | gzip -n -9 > $@.tmp; \
	mv $@.tmp $@; rm -rf $$stage

$(DIST)/checksums.txt: $(DIST_ARCHIVES)
	cd $(DIST) && sha256sum $(notdir $^) > $(notdir $@).tmp && mv $(notdir $@).tmp $(notdir $@)
	@cat $@

# The same build as the Dockerfile's builder stage.
$(DIST)/gate-fn_%: $(DIST_SRCS) $(DIST)/.version
	CGO_ENABLED=0 GOOS=$(word 1,$(subst _, ,$*)) GOARCH=$(word 2,$(subst _, ,$*)) \
		$(GO) build -trimpath -buildvcs=false -ldflags "$(LDFLAGS)" -o $@ ./cmd/gate-fn

dist-check: dist dist-fn dist-tools
	GATE_REQUIRE_TOOLS=1 GATE_DIST_FRESH=1 $(GO) test -count=1 ./krew/...

krew-manifest: $(DIST)/checksums.txt
	$(GO) run ./krew/render -template krew/gate.yaml.tmpl -version '$(VERSION)' \
		-base-url '$(KREW_BASE_URL)' -checksums $< -out krew/gate.yaml

# `kubectl krew` is kubectl dispatching to kubectl-krew on PATH (the tests
# link their own). From a shell: PATH=$(KREW_DIR):$$PATH kubectl krew ...
krew-tools: $(KREW) $(VALIDATE_KREW_MANIFEST)

$(KREW):
	GOBIN=$(KREW_DIR) $(GO) install sigs.k8s.io/krew/cmd/krew@$(KREW_VERSION)
	ln -sf krew $(KREW_DIR)/kubectl-krew

$(VALIDATE_KREW_MANIFEST):
	GOBIN=$(KREW_DIR) $(GO) install sigs.k8s.io/krew/cmd/validate-krew-manifest@$(KREW_VERSION)

dockerfilelint: $(DOCKERFILELINT)

$(DOCKERFILELINT):
	npm install --no-audit --no-fund --no-save --prefix $(TOOLS)/dockerfilelint-$(DOCKERFILELINT_VERSION) \
		dockerfilelint@$(DOCKERFILELINT_VERSION)

# dockerfilelint 1.8.0 predates FROM --platform (it reads the flag as an
# untagged image), so it lints the Dockerfile with that flag dropped.
lint-dockerfile: $(DOCKERFILELINT)
	sed -E 's/^FROM --platform=[^ ]+ /FROM /' Dockerfile | $(DOCKERFILELINT) -

.PHONY: FORCE
FORCE:

.DEFAULT_GOAL := $(_dist_default_goal)
