# Sourced by scripts/lavapipe.sh and scripts/mlir-tools.sh: an apt-get with a private sources list
# and state under "$DIR/apt", pointing at the Debian archive this machine already uses, for the
# suites given; the system's own packages and lists stay as they are.
#   private_apt NAME SUITE...   sets the array APT (apt-get with the private options) and runs
#                               `update`; exit 3 (said on stderr) when no archive is configured or
#                               it cannot be reached.  Needs DIR.
private_apt() {
  local name=$1; shift
  mkdir -p "$DIR/apt/lists/partial"
  local mirror
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' \
    /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || { echo "$name: no Debian archive configured on this machine" >&2; exit 3; }
  local key=/usr/share/keyrings/debian-archive-keyring.gpg suite
  for suite in "$@"; do echo "deb [signed-by=$key] $mirror $suite main"; done > "$DIR/apt/sources.list"
  APT=(apt-get -qq -o "Dir::Etc::sourcelist=$DIR/apt/sources.list" -o Dir::Etc::sourceparts=-
       -o "Dir::State::Lists=$DIR/apt/lists" -o Dir::State::status=/dev/null -o Debug::NoLocking=1
       -o APT::Sandbox::User=root)
  "${APT[@]}" update || { echo "$name: cannot reach the Debian archive $mirror" >&2; exit 3; }
}
