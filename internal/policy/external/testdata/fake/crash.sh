#!/bin/sh
# Stands in for a policy tool that crashes: a Go runtime panic exits 2.
echo 'panic: runtime error: invalid memory address or nil pointer dereference' >&2
exit 2
