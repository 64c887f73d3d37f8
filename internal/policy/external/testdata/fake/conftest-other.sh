#!/bin/sh
# Stands in for a conftest that judged some other file: all green, for a
# file it was not given. Only a stand-in gives this hostile answer.
echo '[{"filename": "/etc/elsewhere.yaml", "namespace": "main", "successes": 5}]'
