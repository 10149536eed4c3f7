# core/tokenizer
