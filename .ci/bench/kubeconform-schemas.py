#!/usr/bin/env python3
"""kubeconform's JSON schemas for the built-in kinds, for `make bench`.

    kubeconform-schemas.py OPENAPI2JSONSCHEMA V3_DIR OUT_DIR

Reads the OpenAPI v3 documents of a Kubernetes release (V3_DIR: the
api/openapi-spec/v3 of the k8s.io/kubernetes module, the source the gate's
embedded schemas are generated from, .ci/schemas.mk) and writes, the way
kubeconform's strict schema sets are laid out:

    OUT_DIR/_definitions.json              every component schema
    OUT_DIR/<kind>[-<group>]-<version>.json  {"$ref": "_definitions.json#/definitions/…"}

The strict transformation is kubeconform's own: OPENAPI2JSONSCHEMA is
scripts/openapi2jsonschema.py of the kubeconform module, and its
additional_properties (every object with properties gets
additionalProperties: false, the root included, as -strict expects) and
replace_int_or_string are applied unchanged. That script converts CRD files
only; this driver gives it the built-in definitions (CRDs go through the
script itself, see .ci/bench.sh).
"""
import glob
import importlib.util
import json
import os
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    script, v3, out = sys.argv[1:]
    spec = importlib.util.spec_from_file_location("openapi2jsonschema", script)
    o2j = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(o2j)  # the script's main is behind __name__ == "__main__"

    defs = {}
    docs = sorted(glob.glob(os.path.join(v3, "*_openapi.json")))
    if not docs:
        sys.exit(f"kubeconform-schemas: no *_openapi.json in {v3}")
    for path in docs:
        with open(path) as f:
            for name, schema in json.load(f).get("components", {}).get("schemas", {}).items():
                defs.setdefault(name, schema)
    text = json.dumps({"definitions": defs}).replace('"#/components/schemas/', '"#/definitions/')
    # The top level has no "properties": every definition, kinds included, is strict.
    defs = o2j.replace_int_or_string(o2j.additional_properties(json.loads(text)))["definitions"]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "_definitions.json"), "w") as f:
        json.dump({"definitions": defs}, f)

    kinds = 0
    for name, schema in defs.items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            group = gvk["group"].split(".")[0]
            fname = "-".join(p for p in (gvk["kind"], group, gvk["version"]) if p).lower() + ".json"
            with open(os.path.join(out, fname), "w") as f:
                json.dump({"$ref": f"_definitions.json#/definitions/{name}"}, f)
            kinds += 1
    print(f"{kinds} kind schemas from {len(docs)} OpenAPI v3 documents")


if __name__ == "__main__":
    main()
