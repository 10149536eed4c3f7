# tools/medusa: belt-medusa, the training data and the side file of
# Medusa draft heads (train.py trains them; doc/drafting.md).
noinst_PROGRAMS += tools/belt-medusa
tools_belt_medusa_SOURCES = tools/medusa/medusa.c
tools_belt_medusa_LDADD = libbelt.la
EXTRA_DIST += tools/medusa/train.py tools/medusa/pycoder29M.medusa.gguf
