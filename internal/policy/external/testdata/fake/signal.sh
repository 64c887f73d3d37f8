#!/bin/sh
# Stands in for a policy tool killed by a signal (out of memory, segfault).
kill -KILL $$
