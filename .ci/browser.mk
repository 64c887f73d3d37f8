# A real browser for the HTML report test (plugin: TestE2EDiffHTMLInBrowser):
# Debian's chromium-headless-shell, installed with apt-get when missing (as
# root, else through sudo). The test finds it on PATH or via $CHROMIUM.
CHROMIUM ?= $(shell command -v chromium-headless-shell 2>/dev/null)
export CHROMIUM

.PHONY: browser-tools
browser-tools:
	@if ! command -v chromium-headless-shell >/dev/null; then \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "browser-tools: apt-get install chromium-headless-shell" >&2; \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 && \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium-headless-shell >&2; \
	fi
