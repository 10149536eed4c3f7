# libbelt: the core, in layers: util -> gguf -> tokenizer -> arch (YAML)
# -> model -> dispatch -> session (decode) -> plugin registry -> api (the
# public calls that look plugins up).
libbelt_la_SOURCES += \
	core/util/error.c \
	core/util/types.c \
	core/arch/expr.c \
	core/arch/arch.c \
	core/arch/config.c \
	core/model/model.c \
	core/dispatch/ops.c \
	core/dispatch/deps.c \
	core/dispatch/dispatch.c \
	core/session/session.c \
	core/session/generate.c \
	core/session/chain.c \
	core/session/speculate.c \
	core/session/tap.c \
	core/session/kv_move.c \
	core/session/grammar.c \
	core/session/gated.c \
	core/session/shift.c \
	core/session/group.c \
	core/plugin/registry.c \
	core/plugin/loader.c \
	core/api/api.c \
	core/api/archs.c

# core/template: chat templates, the Jinja subset of tokenizer.chat_template
# (doc/chat-templates.md); renders from a jansson value.
libbelt_la_SOURCES += \
	core/template/arena.c \
	core/template/lexer.c \
	core/template/parse_expr.c \
	core/template/parse_stmt.c \
	core/template/value.c \
	core/template/strings.c \
	core/template/json.c \
	core/template/eval.c \
	core/template/render.c \
	core/template/filters.c \
	core/template/tests.c \
	core/template/methods.c \
	core/template/globals.c
libbelt_la_CFLAGS += $(JANSSON_CFLAGS)
libbelt_la_LIBADD += $(JANSSON_LIBS)
beltinclude_HEADERS += core/include/belt/template.h

noinst_HEADERS += \
	core/api/api.h \
	core/arch/arch.h \
	core/arch/config.h \
	core/arch/expr.h \
	core/dispatch/dispatch.h \
	core/dispatch/ops_check.h \
	core/model/model.h \
	core/plugin/registry.h \
	core/session/session.h \
	core/template/tpl.h

dist_arch_DATA += conf/arch/llama.yaml conf/arch/qwen2.yaml conf/arch/qwen3.yaml conf/arch/phi3.yaml conf/arch/gemma3.yaml conf/arch/qwen3moe.yaml
dist_conf_DATA += conf/belt.yaml
