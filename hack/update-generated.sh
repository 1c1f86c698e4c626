#!/usr/bin/env bash
# Regenerate, inside the materialized tree, every generated artifact that the series changes,
# with upstream's own generators built from the tree (so their versions are exactly those of
# Kubernetes ${KUBE_VERSION}) and the flags of upstream's hack/update-codegen.sh.
#
# Steps (run all by default, or name some: hack/update-generated.sh deepcopy protobuf):
#   deepcopy conversion protobuf swagger openapi applyconfigs fixtures featuregates openapi-spec
#
# Upstream's hack/update-codegen.sh cannot run here: it insists on protoc 23.4 downloaded from
# GitHub (or a Docker build container), and it regenerates all of Kubernetes (~30 minutes on two
# cores). This script runs the same generators on the packages the series touches. Generators
# that write one aggregated file (openapi, apply configurations) see every package, as upstream.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

TOOLS=${FORK_OUTPUT}/tools
export PATH=${TOOLS}/bin:${FORK_BIN}:${PATH}
BOILERPLATE=hack/boilerplate/boilerplate.generatego.txt
export LC_ALL=C
# INSTALL_PROTOC=0: a missing protoc is an error, never an install (make verify installs it first).
INSTALL_PROTOC=${INSTALL_PROTOC:-1}

TMP_DIR=$(mktemp -d)
trap 'rm -rf "${TMP_DIR}"' EXIT

# Packages whose generated code the series changes.
CORE_INTERNAL=./pkg/apis/core
CORE_V1=./staging/src/k8s.io/api/core/v1

install_tools() {
  log "building generators from the tree"
  (cd "${KUBE_TREE}" && GOBIN=${TOOLS}/bin go install \
    k8s.io/code-generator/cmd/deepcopy-gen \
    k8s.io/code-generator/cmd/conversion-gen \
    k8s.io/code-generator/cmd/go-to-protobuf \
    k8s.io/code-generator/cmd/go-to-protobuf/protoc-gen-gogo \
    k8s.io/code-generator/cmd/applyconfiguration-gen \
    k8s.io/kube-openapi/cmd/openapi-gen \
    ./cmd/genswaggertypedocs \
    golang.org/x/tools/cmd/goimports)
}

# The kube-controller-manager configuration of WorkloadConfigSnapshot: its own package, and the
# component config types that embed it.
KCM_CONFIG=(./pkg/controller/configsnapshot/config ./pkg/controller/apis/config ./staging/src/k8s.io/kube-controller-manager/config/v1alpha1)
# conversion-gen finds the hand-written Convert_* functions of the controllers' configuration
# packages only among the packages of its run: it runs on every package of the controller
# manager's configuration, as upstream's hack/update-codegen.sh does, and rewrites only ours.
kcm_conversion_packages() {
  (cd "${KUBE_TREE}" && grep -rl --include=doc.go '^// *+k8s:conversion-gen=' pkg/controller \
    staging/src/k8s.io/controller-manager staging/src/k8s.io/cloud-provider staging/src/k8s.io/kube-controller-manager |
    xargs -n1 dirname | sort -u | sed 's|^|./|')
}

gen_deepcopy() {
  log "deepcopy-gen"
  deepcopy-gen --go-header-file "${BOILERPLATE}" --output-file zz_generated.deepcopy.go \
    --lint-rules=known-tags-only,require-explicit-disablement "${CORE_INTERNAL}" "${CORE_V1}" "${KCM_CONFIG[@]}"
}

gen_conversion() {
  log "conversion-gen"
  conversion-gen --go-header-file "${BOILERPLATE}" --output-file zz_generated.conversion.go \
    --lint-rules=known-tags-only,require-explicit-disablement \
    --extra-peer-dirs k8s.io/kubernetes/pkg/apis/core,k8s.io/kubernetes/pkg/apis/core/v1,k8s.io/api/core/v1 \
    ./pkg/apis/core/v1
  local kcm=()
  mapfile -t kcm < <(kcm_conversion_packages)
  conversion-gen --go-header-file "${BOILERPLATE}" --output-file zz_generated.conversion.go \
    --lint-rules=known-tags-only,require-explicit-disablement "${kcm[@]}"
}

gen_protobuf() {
  if [[ ${INSTALL_PROTOC} == 0 ]]; then
    "${FORK_ROOT}/hack/install-protoc.sh" --check
  else
    "${FORK_ROOT}/hack/install-protoc.sh"
  fi
  # gogo.proto: upstream reads it from vendor/, which the module zip does not have.
  local gogo imports=${TOOLS}/protoimport
  gogo=$(module_dir github.com/gogo/protobuf@v1.3.2)
  mkdir -p "${imports}/github.com/gogo/protobuf/gogoproto"
  cp "${gogo}/gogoproto/gogo.proto" "${imports}/github.com/gogo/protobuf/gogoproto/gogo.proto"
  log "go-to-protobuf ($(protoc --version))"
  go-to-protobuf --go-header-file "${PWD}/${BOILERPLATE}" \
    --output-dir="${PWD}/staging/src" --proto-import="${PWD}/staging/src" \
    --proto-import="${imports}" --proto-import="${PWD}/third_party/protobuf" \
    --packages=k8s.io/api/core/v1
}

gen_swagger() {
  log "genswaggertypedocs"
  # Same file layout as gen_types_swagger_doc in upstream's hack/update-codegen.sh.
  local gv_dir=staging/src/k8s.io/api/core/v1 tmp=${TMP_DIR}/types_swagger_doc_generated.go
  {
    cat "${BOILERPLATE}"
    echo
    echo "package v1"
    cat <<'DOC'

          // This file contains a collection of methods that can be used from go-restful to
          // generate Swagger API documentation for its models. Please read this PR for more
          // information on the implementation: https://github.com/emicklei/go-restful/pull/215
          //
          // TODOs are ignored from the parser (e.g. TODO(andronat):... || TODO:...) if and only if
          // they are on one line! For multiple line or blocks that you want to ignore use ---.
          // Any context after a --- is ignored.
          //
          // Those methods can be generated by using hack/update-codegen.sh

          // AUTO-GENERATED FUNCTIONS START HERE. DO NOT EDIT.
DOC
  } >"${tmp}"
  genswaggertypedocs -s "${gv_dir}/types.go" -f - >>"${tmp}"
  echo "// AUTO-GENERATED FUNCTIONS END HERE" >>"${tmp}"
  gofmt -w -s "${tmp}"
  mv "${tmp}" "${gv_dir}/types_swagger_doc_generated.go"
}

# k8s_tag_dirs PATTERN EXCLUDED...: directories of Go files (outside testdata) with a +k8s: tag
# matching PATTERN, as upstream's update-codegen.sh finds them.
k8s_tag_dirs() {
  local pattern=$1; shift
  local excludes=() e
  for e in "$@"; do excludes+=(":!:${e}/**"); done
  git grep --untracked -l -e '^// *+k8s:' -- ':(glob)**/*.go' ':!:*/testdata/*' ':!:vendor/*' "${excludes[@]}" |
    xargs grep -l -- "${pattern}" | xargs -n1 dirname | sort -u
}

gen_openapi() {
  log "openapi-gen (all tagged packages)"
  local dirs=() pkgs=() d
  mapfile -t dirs < <(k8s_tag_dirs '+k8s:openapi' staging/src/k8s.io/code-generator staging/src/k8s.io/sample-apiserver staging/src/k8s.io/sample-controller)
  for d in "${dirs[@]}"; do pkgs+=("./${d}"); done
  local report=${TMP_DIR}/api-rule-violations.list
  : >"${report}"
  openapi-gen --go-header-file "${BOILERPLATE}" --output-file zz_generated.openapi.go \
    --output-dir pkg/generated/openapi --output-pkg k8s.io/kubernetes/pkg/generated/openapi \
    --report-filename "${report}" --output-model-name-file zz_generated.model_name.go "${pkgs[@]}"
  diff -u api/api-rules/violation_exceptions.list "${report}" ||
    die "openapi-gen reports API rule violations that differ from api/api-rules/violation_exceptions.list"
}

gen_applyconfigs() {
  log "applyconfiguration-gen (all of k8s.io/api)"
  GOBIN=${TOOLS}/bin go install k8s.io/kubernetes/pkg/generated/openapi/cmd/models-schema
  local apis=()
  mapfile -t apis < <(cd staging/src && git ls-files -cmo --exclude-standard -- ':(glob)k8s.io/api/**/types.go' | xargs -n1 dirname | sort -u)
  apis+=(k8s.io/apimachinery/pkg/apis/meta/v1)
  local schema=${TMP_DIR}/models-schema.json
  models-schema >"${schema}"
  applyconfiguration-gen --openapi-schema "${schema}" --go-header-file "${BOILERPLATE}" \
    --output-dir "${PWD}/staging/src/k8s.io/client-go/applyconfigurations" \
    --output-pkg k8s.io/client-go/applyconfigurations "${apis[@]}"
}

gen_fixtures() {
  log "k8s.io/api HEAD compatibility fixtures"
  (cd staging/src/k8s.io/api && UPDATE_COMPATIBILITY_FIXTURE_DATA=true go test . -run '//HEAD' -count=1 >/dev/null) || true
  (cd staging/src/k8s.io/api && go test . -run '//HEAD' -count=1 >/dev/null) ||
    die "k8s.io/api HEAD fixtures still fail after regeneration"
}

gen_featuregates() {
  log "feature gate lists"
  # As upstream's hack/update-featuregates.sh.
  go run test/compatibility_lifecycle/main.go feature-gates update >/dev/null
  go run cmd/genfeaturegates/genfeaturegates.go -output=test/compatibility_lifecycle/reference/feature_list.md
}

gen_openapi_spec() {
  log "api/openapi-spec (a real kube-apiserver and etcd, as upstream's hack/update-openapi-spec.sh)"
  "${FORK_ROOT}/hack/update-openapi-spec.sh"
}

ALL_STEPS=(deepcopy conversion protobuf swagger openapi applyconfigs fixtures featuregates openapi-spec)

main() {
  [[ -d ${KUBE_TREE}/.git ]] || die "no tree at ${KUBE_TREE}: run make tree first"
  cd "${KUBE_TREE}"
  local steps=("$@")
  ((${#steps[@]})) || steps=("${ALL_STEPS[@]}")
  install_tools
  local s
  for s in "${steps[@]}"; do
    case ${s} in
      deepcopy) gen_deepcopy ;;
      conversion) gen_conversion ;;
      protobuf) gen_protobuf ;;
      swagger) gen_swagger ;;
      openapi) gen_openapi ;;
      applyconfigs) gen_applyconfigs ;;
      fixtures) gen_fixtures ;;
      featuregates) gen_featuregates ;;
      openapi-spec) gen_openapi_spec ;;
      *) die "unknown step ${s} (known: ${ALL_STEPS[*]})" ;;
    esac
  done
}

main "$@"
