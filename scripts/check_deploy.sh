#!/usr/bin/env bash
# The deployment files, checked with real tools where this machine has them
# (scripts/test.sh runs it; tests/e2e/deploy_files.rs reads the same files for
# the rules no tool checks):
#
# - nginx -t on both shipped layouts (deploy/nginx/), under a throwaway prefix
#   with a self-signed certificate; the compose layout's upstream names
#   (fenix-1, fenix-2: Docker's DNS) are mapped to 127.0.0.1 first, and the
#   listeners (443, 80) moved to free unprivileged ports;
# - systemd-analyze verify on deploy/fenix@.service, its ExecStart pointed at
#   a copy of a binary in the throwaway directory;
# - docker-compose.yml against the Compose Specification's JSON schema
#   (deploy/checks/compose-spec.json), or `docker compose config` when the
#   compose plugin is installed;
# - bash -n on scripts/release.sh.
#
# A tool that is missing is reported and skipped, not failed: the Rust test
# still reads every file.
set -euo pipefail
cd "$(dirname "$0")/.."
TMP=$(mktemp -d /tmp/fenix-deploy-XXXXXX)
trap 'rm -rf "$TMP"' EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

check_nginx() {
  local nginx
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  [ -x "$nginx" ] || { echo "skipped nginx -t: nginx is not installed"; return; }
  mkdir -p "$TMP/nginx/conf.d" "$TMP/nginx/snippets" "$TMP/nginx/certs" "$TMP/nginx/logs"
  cp deploy/nginx/fenix-proxy.conf deploy/nginx/fenix-tls.conf "$TMP/nginx/snippets/"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=fenix.example.com \
    -keyout "$TMP/nginx/certs/privkey.pem" -out "$TMP/nginx/certs/fullchain.pem" 2>/dev/null
  for layout in compose local; do
    rm -f "$TMP/nginx/conf.d/"*
    # Its listeners on free unprivileged ports: nginx -t binds them, and may run as a user.
    local tls plain
    tls=$(free_port) plain=$(free_port)
    sed -e 's/server fenix-[12]:/server 127.0.0.1:/' -e "s/listen 443 ssl;/listen 127.0.0.1:$tls ssl;/" \
      -e "s/listen 80;/listen 127.0.0.1:$plain;/" "deploy/nginx/fenix-$layout.conf" >"$TMP/nginx/conf.d/fenix.conf"
    # The certificate paths of fenix-tls.conf, under the throwaway prefix.
    sed -i -e "s#/etc/nginx/certs/#$TMP/nginx/certs/#" "$TMP/nginx/snippets/fenix-tls.conf"
    cat >"$TMP/nginx/nginx.conf" <<CONF
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/logs/error.log;
events {}
http {
    access_log off;
    include conf.d/*.conf;
}
CONF
    local out
    if ! out=$("$nginx" -t -e "$TMP/nginx/logs/error.log" -p "$TMP/nginx/" -c "$TMP/nginx/nginx.conf" 2>&1) || grep -q '\[warn\]' <<<"$out"; then
      echo "$out" >&2
      echo "error: nginx -t refused (or warned about) deploy/nginx/fenix-$layout.conf" >&2
      exit 1
    fi
    echo "nginx -t: deploy/nginx/fenix-$layout.conf ok"
  done
}

check_systemd() {
  command -v systemd-analyze >/dev/null || { echo "skipped systemd-analyze verify: not installed"; return; }
  mkdir -p "$TMP/systemd"
  cp "$(type -P true)" "$TMP/systemd/fenix"
  sed -e "s#^ExecStart=/usr/local/bin/fenix#ExecStart=$TMP/systemd/fenix#" deploy/fenix@.service >"$TMP/systemd/fenix@.service"
  local out
  # The instance, as systemd would load it; `User=fenix` need not exist here.
  out=$(cd "$TMP/systemd" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$TMP/systemd/fenix@1.service" 2>&1 \
    | grep -v -e 'fenix@1.service: Failed to .*User' -e '^$' || true)
  if [ -n "$out" ]; then
    echo "$out" >&2
    echo "error: systemd-analyze verify found problems in deploy/fenix@.service" >&2
    exit 1
  fi
  echo "systemd-analyze verify: deploy/fenix@.service ok"
}

check_compose() {
  if docker compose version >/dev/null 2>&1; then
    # Interpolation needs the .env the docs make; any values do.
    printf 'FENIX_MASTER_KEY=x\nFENIX_ADMIN_TOKEN=x\nPOSTGRES_PASSWORD=x\n' >"$TMP/compose.env"
    docker compose --env-file "$TMP/compose.env" -f docker-compose.yml config --quiet
    echo "docker compose config: docker-compose.yml ok"
    return
  fi
  python3 - <<'PY'
import json, sys
try:
    import yaml, jsonschema
except ImportError as e:
    print(f"skipped the compose schema check: {e.name} is not installed")
    sys.exit(0)
doc = yaml.safe_load(open("docker-compose.yml"))
schema = json.load(open("deploy/checks/compose-spec.json"))
errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errors:
    print(f"docker-compose.yml: {'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
if errors:
    sys.exit("error: docker-compose.yml does not match the Compose Specification")
print("compose schema: docker-compose.yml ok")
PY
}

check_nginx
check_systemd
check_compose
bash -n scripts/release.sh && echo "bash -n: scripts/release.sh ok"
