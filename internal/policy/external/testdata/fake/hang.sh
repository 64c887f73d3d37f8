#!/bin/sh
# Stands in for a policy tool that never finishes.
exec sleep 60
