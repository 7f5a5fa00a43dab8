"""nn.LSTM/GRU/RNN on device tensors, with the memory model xmem_gpu/rnn.py gives both
captures: ATen's step-by-step cells, not oneDNN's fused CPU LSTM.

ATen's `lstm` takes oneDNN on the CPU whenever oneDNN is enabled (use_mkldnn in RNN.cpp);
turning oneDNN off for the one call sends it down the cells fast mode's meta tensors take.
GRU and plain RNN take the cells on the CPU already; they share the warning.
"""
import torch

from . import devices


def _handler(warning):
    def recurrent(mode, func, args, kwargs):
        if mode.dev_of_args(args, kwargs) != devices.GPU:
            return mode.run_on(devices.HOST, func, args, kwargs)
        warning.on_device_call()
        with torch.backends.mkldnn.flags(enabled=False):
            return mode.run_on(devices.GPU, func, args, kwargs)
    return recurrent


def install(note):
    """Routes torch.lstm, gru, rnn_tanh and rnn_relu through the handler; NOTE(key, value)."""
    from xmem_gpu import rnn
    handler = _handler(rnn.WarnOnce(note))
    for function in rnn.functions(torch):
        devices.register_special(function, handler)
