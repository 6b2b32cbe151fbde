#!/usr/bin/env bash
# make-certs.sh DIR HOST: a certificate authority (DIR/ca.crt, DIR/ca.key) and a certificate for
# the broker at HOST (DIR/server.crt, DIR/server.key; HOST a name or an IP address), for a lab or a
# trial; a site with its own PKI uses that instead. docs/fleet.md "Security".
#   make-certs.sh /etc/mosquitto/tsapply broker.care.example
# Agents and the controller are given DIR/ca.crt (--ca-file, TSAPPLY_MQTT_CA_FILE).
set -euo pipefail
dir=$1 host=$2
umask 077
if [[ $host =~ ^[0-9.]+$ || $host == *:* ]]; then san="IP:$host"; else san="DNS:$host"; fi
[ -f "$dir/ca.key" ] || openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=tsapply fleet CA" \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=$host" -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 825 \
  -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san") -out "$dir/server.crt" 2>/dev/null
rm -f "$dir/server.csr"
chmod 0644 "$dir/ca.crt" "$dir/server.crt"
# The broker reads its key as the mosquitto user.
chgrp mosquitto "$dir/server.key" 2>/dev/null && chmod 0640 "$dir/server.key" || true
