#!/bin/sh
# Stands in for a kyverno that prints nothing at all and exits 0. Only a
# stand-in gives this hostile answer on demand.
exit 0
