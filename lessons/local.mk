# lessons/local.mk - lesson scripts and the lesson runner (placeholder).
