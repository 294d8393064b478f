# src/ui/local.mk - the ncurses step-through view (placeholder).
