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

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
