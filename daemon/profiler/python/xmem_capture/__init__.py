"""xmem capture: run an unmodified CUDA training script on the CPU and record every tensor
storage allocation and free in docs/trace-format.md. See docs/capture.md."""
