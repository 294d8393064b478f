# src/model/local.mk - the model: the engines (problems, the schedule,
# the online update, the simulator, split-KV's combine, the backward, one
# timeline over them), traffic and memory, the references.  No curses, no
# CUDA, no options and no files written: that is src/app.

noinst_LIBRARIES += src/model/libmodel.a
src_model_libmodel_a_SOURCES = \
	src/model/util.c src/model/util.h \
	src/model/dtype.c src/model/dtype.h \
	src/model/fp8.c src/model/fp8.h src/model/fp8_rule.h \
	src/model/inputs.c src/model/inputs.h \
	src/model/npy.c src/model/npy.h \
	src/model/paged.c src/model/paged.h \
	src/model/problem.c src/model/problem.h \
	src/model/schedule.c src/model/schedule.h \
	src/model/online.c src/model/online.h src/model/online_rule.h \
	src/model/tile_rule.h \
	src/model/mask_rule.h src/model/mask.c src/model/mask.h src/model/philox.h \
	src/model/traffic.c src/model/traffic.h \
	src/model/roofline.c src/model/roofline.h \
	src/model/ckstore.c src/model/ckstore.h \
	src/model/sim.c src/model/sim.h \
	src/model/merge.h \
	src/model/combine.c src/model/combine.h \
	src/model/reference.c src/model/reference.h \
	src/model/compare.c src/model/compare.h \
	src/model/heatmap.c src/model/heatmap.h \
	src/model/backward.c src/model/backward.h \
	src/model/gradref.c src/model/gradref.h \
	src/model/varlen.c src/model/varlen.h \
	src/model/timeline.c src/model/timeline.h \
	src/model/memory.c src/model/memory.h \
	src/model/pipeline.c src/model/pipeline.h \
	src/model/pipeline_fit.c src/model/pipeline_fit.h \
	src/model/pipeline_warps.c src/model/pipeline_warps.h
