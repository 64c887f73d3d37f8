# make fuzz: every fuzz target of a parser of untrusted input, each for
# FUZZTIME (default 15s), one after another. CI runs it on every run; a
# failing input is written under the package's testdata/fuzz/<Target>/ by
# go test, and committed it becomes a regression test that plain `go test`
# replays.
FUZZTIME ?= 15s
FUZZ_TARGETS := \
	./internal/stream:FuzzParse \
	./internal/stream:FuzzCheckResourceList \
	./internal/config:FuzzDecode \
	./internal/images:FuzzRef \
	./internal/resolve:FuzzPinned \
	./internal/resolve:FuzzIsIndexBody \
	./internal/argo:FuzzPaths \
	./internal/kustomization:FuzzSetDigests

.PHONY: fuzz
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done
