"""GPU-path rules both captures apply where a CUDA device would decide (docs/fast-mode.md)."""
