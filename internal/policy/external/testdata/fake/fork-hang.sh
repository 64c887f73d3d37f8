#!/bin/sh
# Stands in for a policy tool that forks a child which never finishes and
# holds the tool's output open. A real CLI cannot be made to hang on demand.
sleep 60
echo never
