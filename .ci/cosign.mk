# The cosign CLI, for the tests that sign images with it and check that the
# gate verifies what it wrote (plugin/signature_e2e_test.go). Included from
# the top-level Makefile; `make test` builds it into $(TOOLS) (~20 min cold,
# from the module proxy) and exports COSIGN. It signs offline, against the
# tests' in-process registry on loopback.
COSIGN_VERSION := v2.6.1
COSIGN         := $(TOOLS)/cosign-$(COSIGN_VERSION)/cosign
export COSIGN

.PHONY: cosign-tools
cosign-tools: $(COSIGN)

$(TOOLS)/cosign-%/cosign:
	@echo "building the cosign CLI $* (long the first time)"
	GOBIN=$(@D) $(GO) install github.com/sigstore/cosign/v2/cmd/cosign@$*
