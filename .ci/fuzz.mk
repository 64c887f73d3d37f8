# make fuzz: every fuzz target of a parser of untrusted input, each for
# FUZZTIME (default 15s), one after another. CI runs it on every run; a
# failing input is written under the package's testdata/fuzz/<Target>/ by
# go test, and committed it becomes a regression test that plain `go test`
# replays.
FUZZTIME ?= 15s
# Every Fuzz function of the tree, found anew on each run (package:Name).
FUZZ_TARGETS ?= $(shell bash .ci/fuzz-targets.sh)

.PHONY: fuzz
fuzz:
	@[ -n "$(strip $(FUZZ_TARGETS))" ] || { echo "make fuzz: no fuzz targets found"; exit 1; }
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		GO="$(GO)" bash .ci/fuzz.sh $$pkg $$name $(FUZZTIME); \
	done
