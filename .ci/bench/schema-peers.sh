# .ci/bench/schema-peers.sh — sourced by .ci/bench.sh and .ci/schema-agreement.sh:
# the schemas of the gate's peers (kubeconform, kubectl-validate), made
# offline from the sources the gate embeds (.ci/schemas.mk), read from their
# module zips on the Go module proxy.
#
# Needs: W (a work directory), GO, K8S_SCHEMA_VERSION (e.g. v1.37.2),
# KUBECONFORM_VERSION (whose scripts/openapi2jsonschema.py converts).
# Functions print why they failed on stdout and return 1.

# modzip MODULE@VERSION → its zip from the module proxy (a module that needs a
# newer Go than this toolchain still downloads); modfile prints one file of
# it, modzip_extract copies one directory's files (flat) into DEST.
modzip() {
	local zip
	zip=$(cd "$W" && "$GO" mod download -json "$1" 2>/dev/null | jq -r '.Zip // empty') || true
	[[ -n $zip && -f $zip ]] || { echo "$1 is not available from the module proxy" >&2; return 1; }
	echo "$zip"
}
modfile() { # MODULE@VERSION PATH
	local zip
	zip=$(modzip "$1") && unzip -p "$zip" "$1/$2"
}
modzip_extract() { # MODULE@VERSION DIR DEST
	local zip
	zip=$(modzip "$1") && mkdir -p "$3" && unzip -q -j -o "$zip" "$1/$2/*" -d "$3"
}

# k8s_openapi DEST: the OpenAPI v3 documents of Kubernetes K8S_SCHEMA_VERSION
# (api/openapi-spec/v3 of the k8s.io/kubernetes module: what the gate embeds).
k8s_openapi() {
	modzip_extract "k8s.io/kubernetes@$K8S_SCHEMA_VERSION" api/openapi-spec/v3 "$1" ||
		{ echo "k8s.io/kubernetes@$K8S_SCHEMA_VERSION's OpenAPI v3 is not available"; return 1; }
}

# kubeconform_schemas OPENAPI_DIR CRD_DIR OUT: strict JSON schemas made with
# kubeconform's own scripts/openapi2jsonschema.py, for the built-in kinds
# (.ci/bench/kubeconform-schemas.py drives it) and every CRD in CRD_DIR
# (*.yaml, YAML or JSON). Location template: OUT/{{ .ResourceKind }}{{ .KindSuffix }}.json
kubeconform_schemas() {
	local openapi=$1 crds=$2 out=$3 f
	mkdir -p "$out"
	command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null ||
		{ echo "python3 with PyYAML is needed for kubeconform's openapi2jsonschema.py"; return 1; }
	modfile "github.com/yannh/kubeconform@$KUBECONFORM_VERSION" scripts/openapi2jsonschema.py >"$W/openapi2jsonschema.py" ||
		{ echo "kubeconform@$KUBECONFORM_VERSION's scripts/openapi2jsonschema.py is not available"; return 1; }
	python3 "$(dirname "${BASH_SOURCE[0]}")/kubeconform-schemas.py" "$W/openapi2jsonschema.py" "$openapi" "$out" >&2 ||
		{ echo "converting the Kubernetes $K8S_SCHEMA_VERSION OpenAPI failed"; return 1; }
	for f in "$crds"/*.yaml; do
		(cd "$out" && FILENAME_FORMAT='{kind}-{group}-{version}' DENY_ROOT_ADDITIONAL_PROPERTIES=1 \
			python3 "$W/openapi2jsonschema.py" "$f" >/dev/null) ||
			{ echo "openapi2jsonschema.py failed on the CRD $f"; return 1; }
	done
	[[ -s $out/deployment-apps-v1.json && -s $out/service-v1.json ]] ||
		{ echo "schema generation produced no deployment/service schema"; return 1; }
}

# kubectl_validate_schemas OPENAPI_DIR OUT: the same documents in
# kubectl-validate's --local-schemas layout (api/v1.json, apis/GROUP/VERSION.json).
kubectl_validate_schemas() {
	local openapi=$1 out=$2 f b g
	for f in "$openapi"/*_openapi.json; do
		b=$(basename "$f" _openapi.json)
		if [[ $b =~ ^api__(v[0-9a-z]+)$ ]]; then
			mkdir -p "$out/api" && cp "$f" "$out/api/${BASH_REMATCH[1]}.json"
		elif [[ $b =~ ^apis__([^_]+)__(v[0-9a-z]+)$ ]]; then
			g=${BASH_REMATCH[1]}
			mkdir -p "$out/apis/$g" && cp "$f" "$out/apis/$g/${BASH_REMATCH[2]}.json"
		fi
	done
	[[ -s $out/apis/apps/v1.json ]] || { echo "no apis/apps/v1.json among the OpenAPI v3 documents"; return 1; }
}
