#!/bin/bash
# gen.sh KIND N: a program that stresses the fusion budget (src/fuse/fuse.h), on stdout.
#   layernorm N  N stacked layernorm + residual steps (two row reductions each)
#   reduce N     N softmax-like statements over rows (a max and a sum each)
#   pointwise N  N pointwise statements in a chain
set -e
kind=$1 n=$2
case $kind in
layernorm)
    echo "fn f(x: f32[R, D], w: f32[D], b: f32[D]) -> f32[R, D] {"
    echo "    h0 = x"
    for ((i = 0; i < n; i++)); do
        echo "    mu$i = mean(h$i, axis=-1, keepdim=true)"
        echo "    v$i = mean((h$i - mu$i) * (h$i - mu$i), axis=-1, keepdim=true)"
        echo "    h$((i + 1)) = h$i + (h$i - mu$i) * rsqrt(v$i + 1e-5) * w + b"
    done
    echo "    return h$n"
    echo "}" ;;
reduce)
    echo "fn f(x: f32[R, D]) -> f32[R, D] {"
    echo "    h0 = x"
    for ((i = 0; i < n; i++)); do
        echo "    h$((i + 1)) = exp(h$i - max(h$i, axis=-1, keepdim=true)) / sum(exp(h$i - max(h$i, axis=-1, keepdim=true)), axis=-1, keepdim=true)"
    done
    echo "    return h$n"
    echo "}" ;;
pointwise)
    echo "fn f(x: f32[R, D], y: f32[R, D]) -> f32[R, D] {"
    echo "    h0 = x"
    for ((i = 0; i < n; i++)); do
        case $((i % 4)) in
        0) echo "    h$((i + 1)) = h$i * 0.5 + y" ;;
        1) echo "    h$((i + 1)) = tanh(h$i) - 0.25" ;;
        2) echo "    h$((i + 1)) = h$i * y + 1.0" ;;
        3) echo "    h$((i + 1)) = max(h$i, -3.0)" ;;
        esac
    done
    echo "    return h$n"
    echo "}" ;;
*) echo "gen.sh: unknown kind $kind" >&2; exit 2 ;;
esac
