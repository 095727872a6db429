#!/usr/bin/env bash
# The main job: install what is missing, build the `lessons` CLI (not the test programs: the test
# command builds those), run the full conformance audit, build the docs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/install-deps.sh
BUILD_TARGETS=lessons scripts/build.sh
status=0
"$BUILD_DIR/bin/lessons" audit --json "$BUILD_DIR/audit.json" --junit "$BUILD_DIR/audit.xml" || status=$?
# The docs weave the audit just run (its JSON), rather than running it a second time.
VL_AUDIT_JSON="$(pwd)/$BUILD_DIR/audit.json" cmake --build "$BUILD_DIR" --target docs
echo "Docs: $(pwd)/$BUILD_DIR/docs/html/index.html"
echo "Reports: $(pwd)/$BUILD_DIR/audit.json (JSON), $(pwd)/$BUILD_DIR/audit.xml (JUnit)"
exit $status
