# Shared by the command-line test scripts (sourced, not run): a scratch folder that is removed
# on exit and made the current folder, the python with h5py, and the pass/fail tally;
# `finish` prints the tally and fails when anything failed.
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAILED: $1"; }

# expect_command_failure NAME EXIT_CODE MESSAGE_SUBSTRING COMMAND...: the command exits with
# EXIT_CODE and says MESSAGE_SUBSTRING on stderr.
expect_command_failure() {
  local name=$1 code=$2 message=$3
  shift 3
  "$@" >stdout.txt 2>stderr.txt
  local status=$?
  if [ "$status" -ne "$code" ]; then
    fail "$name: exit code $status, expected $code ($(cat stderr.txt))"
  elif ! grep -qF -- "$message" stderr.txt; then
    fail "$name: message '$(cat stderr.txt)' lacks '$message'"
  else
    pass "$name"
  fi
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
