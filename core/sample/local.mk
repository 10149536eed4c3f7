# core/sample: sampling settings (the samplers themselves are plugins).
libbelt_la_SOURCES += core/sample/sampling.c
