#!/usr/bin/env bash
# add-user.sh DIR SITE AGENT [PASSWORD]: gives the agent AGENT of site SITE a user on the broker
# whose files are in DIR (the passwords file via mosquitto_passwd, a confined block in DIR/acl),
# and prints the password (generated unless given). docs/fleet.md "Security".
#   (umask 077; add-user.sh /etc/mosquitto/tsapply ward-c ward-c-station > ward-c-station.password)
# (the umask makes the password file 0600; a plain redirect would let every user read it).
# The agent then runs with --username AGENT --password-file ward-c-station.password.
set -euo pipefail
dir=$1 site=$2 agent=$3
password=${4:-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')}
for name in "$site" "$agent"; do
  [[ $name =~ ^[A-Za-z0-9._:-]+$ ]] || { echo "add-user.sh: '$name' must be letters, digits, '.', '_', ':' and '-'" >&2; exit 64; }
done
touch "$dir/passwords"
chmod 0600 "$dir/passwords"
mosquitto_passwd -b "$dir/passwords" "$agent" "$password"
# The broker reads the file as the mosquitto user; nobody else may.
chgrp mosquitto "$dir/passwords" 2>/dev/null && chmod 0640 "$dir/passwords" || true
if ! grep -qx "user $agent" "$dir/acl" 2>/dev/null; then
  cat >>"$dir/acl" <<ACL

user $agent
topic read tsapply/v1/$site/+/desired
topic write tsapply/v1/$site/+/status
topic write tsapply/v1/$site/+/events
topic write tsapply/v1/$site/+/sos
topic write tsapply/v1/$site/+/state
topic readwrite tsapply/v1/$site/agent/$agent/state
ACL
fi
printf '%s\n' "$password"
