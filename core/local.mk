# libbelt: the core.
libbelt_la_SOURCES += \
	core/util/error.c \
	core/util/types.c
