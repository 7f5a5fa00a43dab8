"""`xmem probe-gpu` (docs/probe-gpu.md): NVML around a scripted torch sequence, written as a
GPU catalog entry. nvml.py reads the device, sequence.py runs in the site's torch, entry.py
turns the readings into the catalog's schema."""
