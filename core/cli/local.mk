# core/cli
