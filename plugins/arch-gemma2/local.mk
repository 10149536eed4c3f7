# plugins/arch-gemma2: Gemma 2 as an architecture plugin (belt/arch.h):
# gemma2.yaml turned into a C string at build time, and with Vulkan the
# softcap shader compiled by glslc against shaders/common.glsl.
plugin_LTLIBRARIES += plugins/arch-gemma2.la
plugins_arch_gemma2_la_SOURCES = plugins/arch-gemma2/plugin.c
plugins_arch_gemma2_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/plugins/arch-gemma2
plugins_arch_gemma2_la_LDFLAGS = $(PLUGIN_LINK_FLAGS)
plugins_arch_gemma2_la_LIBADD = libbelt.la -lm
ARCH_GEMMA2_GEN = plugins/arch-gemma2/gemma2.yaml.h
EXTRA_DIST += plugins/arch-gemma2/gemma2.yaml plugins/arch-gemma2/softcap.comp

# each line of the file as a C string literal ending in \n
plugins/arch-gemma2/gemma2.yaml.h: $(srcdir)/plugins/arch-gemma2/gemma2.yaml
	$(AM_V_GEN)$(MKDIR_P) plugins/arch-gemma2 && \
	$(AWK) '{ gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); print "\"" $$0 "\\n\"" }' $< > $@.tmp && \
	mv $@.tmp $@

if HAVE_VULKAN
plugins_arch_gemma2_la_CPPFLAGS += -DARCH_GEMMA2_SPIRV
ARCH_GEMMA2_GEN += plugins/arch-gemma2/softcap.spv.h
plugins/arch-gemma2/softcap.spv.h: $(srcdir)/plugins/arch-gemma2/softcap.comp $(srcdir)/shaders/common.glsl $(srcdir)/shaders/tanh.glsl
	$(AM_V_GEN)$(MKDIR_P) plugins/arch-gemma2 && $(VK_GLSLC) -o $@ $(srcdir)/plugins/arch-gemma2/softcap.comp
endif

$(plugins_arch_gemma2_la_OBJECTS): $(ARCH_GEMMA2_GEN)
CLEANFILES += $(ARCH_GEMMA2_GEN)
