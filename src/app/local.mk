# src/app/local.mk - what every command does around the model: the
# options they share, building a problem and its whole timeline from
# them, the trace writers, and output files written whole or not at all.

noinst_LIBRARIES += src/app/libapp.a
src_app_libapp_a_SOURCES = \
	src/app/options.c src/app/options.h \
	src/app/helpwrap.c src/app/helpwrap.h \
	src/app/options_fp8.c src/app/options_fp8.h \
	src/app/options_paged.c src/app/options_paged.h \
	src/app/setup.c src/app/setup.h \
	src/app/fulltimeline.c src/app/fulltimeline.h \
	src/app/trace.c src/app/trace.h \
	src/app/outfile.c src/app/outfile.h \
	src/app/npyout.c src/app/npyout.h \
	src/app/pipeline_json.c src/app/pipeline_json.h
