#!/bin/sh
# The run-time packages belt links beyond those ../shared/gpu/fetch-debs
# puts in .gl/ (the HTTP server's libmicrohttpd and its TLS chain, the
# JSON library), into .gl/extra/, from the repository root, once per
# checkout. tests/device-run.sh extracts only the libraries of them that
# the GPU machine lacks.
set -e
mkdir -p .gl/extra
cd .gl/extra
apt-get download libmicrohttpd12 libjansson4 libgnutls30 libp11-kit0 libidn2-0 \
	libunistring2 libtasn1-6 libnettle8 libhogweed6 libgmp10 libffi8
