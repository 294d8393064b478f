# doc/local.mk - the manual page and the documents that ship with it.

dist_man_MANS += doc/flashstep.1
EXTRA_DIST += doc/algorithm.md doc/claims.md doc/design.md doc/performance.md

# The H200 recordings of the kernels' pipelines: `flashstep pipeline
# --check/--view/--what-if` reads them, and so do the lessons about the
# machine, installed or in the source tree (src/lesson/lesson_machine.c
# finds them from the lessons' folders).
recordingsdir = $(pkgdatadir)/recordings
dist_recordings_DATA = doc/recordings/README.md \
	doc/recordings/wgmma-d128.json doc/recordings/wgmma-d128-causal.json \
	doc/recordings/wgmma-d128-nopp.json doc/recordings/wgmma-d64.json
