# doc/local.mk - the manual page and the documents that ship with it.

dist_man_MANS += doc/flashstep.1
EXTRA_DIST += doc/algorithm.md doc/claims.md doc/design.md doc/performance.md
