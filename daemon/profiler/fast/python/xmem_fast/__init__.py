"""xmem fast capture: the script's GPU tensors are meta tensors (shape, dtype, storage; no
data), so a training step costs shape arithmetic only. See docs/fast-mode.md."""
