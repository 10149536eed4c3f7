# core/gguf
